/*
 * capture_scan.c — what a captured statement wrote, read in C from its transition tables
 * (docs/writing-with-sql.md), before anything is logged: the partitions it touched (byte "C"
 * order: the lock order of capture_log.c), how many rows, and the statement's shape, which picks
 * the log statement storage_capture.c runs:
 *   one       exactly one row written (INSERT of one row, or UPDATE of one row that kept its
 *             partition, rowId and scopes): its values are handed to the one-row statement as
 *             parameters (no transition table, no plan over one);
 *   in place  every row of an UPDATE kept its partition, rowId and scopes (the common bulk
 *             UPDATE of app columns): no delete change, no row-scope or tombstone work
 *             (push-and-pull.md §2.3: a row that stays in its scopes is one upsert change);
 *   insert    an INSERT (COPY FROM): every row is new to the table.
 * An UPDATE's transition tables hold each updated row's old and new version at the same
 * position (the executor appends both per row), so "in place" is a check of the pairs: equal
 * partition, rowId and scopes bytes; any other pairing only makes the check fail, and the
 * statement then takes the general log statement, which joins old and new by rowId.
 * The rows are read through a read pointer of this scan's own, so every other reader of the
 * tuplestores (the log statement, the app's own AFTER triggers) is unaffected.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/jsonb.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "capture.h"
#include "storage_scan.h"

static bool
text_equal(Datum a, Datum b)
{
	text	   *x = DatumGetTextPP(a);
	text	   *y = DatumGetTextPP(b);

	return VARSIZE_ANY_EXHDR(x) == VARSIZE_ANY_EXHDR(y) &&
		memcmp(VARDATA_ANY(x), VARDATA_ANY(y), VARSIZE_ANY_EXHDR(x)) == 0;
}

/* jsonb's binary form of equal scope objects (string members, written by capture_row.c or a
 * push) is equal; unequal bytes only send the statement to the general log statement */
static bool
bytes_equal(Datum a, Datum b)
{
	struct varlena *x = PG_DETOAST_DATUM_PACKED(a);
	struct varlena *y = PG_DETOAST_DATUM_PACKED(b);

	return VARSIZE_ANY_EXHDR(x) == VARSIZE_ANY_EXHDR(y) &&
		memcmp(VARDATA_ANY(x), VARDATA_ANY(y), VARSIZE_ANY_EXHDR(x)) == 0;
}

/* Note the partition of a row (a copy when it differs from the last one noted). */
static void
note_partition(SyncCaptureScan *s, Datum part, int *cap)
{
	char	   *p;

	if (s->nparts > 0)
	{
		text	   *x = DatumGetTextPP(part);
		const char *last = s->parts[s->nparts - 1];
		size_t		len = VARSIZE_ANY_EXHDR(x);

		if (strlen(last) == len && memcmp(last, VARDATA_ANY(x), len) == 0)
			return;
	}
	p = TextDatumGetCString(part);
	if (s->nparts == *cap)
	{
		*cap *= 2;
		s->parts = repalloc(s->parts, sizeof(char *) * *cap);
	}
	s->parts[s->nparts++] = p;
}

static int
cmp_part(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* sort the noted partitions in byte order and drop repeats */
static void
finish_partitions(SyncCaptureScan *s)
{
	int			k = 0;

	if (s->nparts > 1)
		qsort(s->parts, s->nparts, sizeof(char *), cmp_part);
	for (int i = 0; i < s->nparts; i++)
		if (k == 0 || strcmp(s->parts[k - 1], s->parts[i]) != 0)
			s->parts[k++] = s->parts[i];
	s->nparts = k;
}

/* Keep the single written row's values (copies: the tuple goes with the next fetch). */
static void
keep_row(SyncCaptureScan *s, TupleTableSlot *slot, const SyncSyncedCols *c)
{
	bool		isnull;

	s->row_id = TextDatumGetCString(slot_getattr(slot, c->row, &isnull));
	s->version = DatumGetInt64(slot_getattr(slot, c->ver, &isnull));
	s->scopes = PointerGetDatum(PG_DETOAST_DATUM_COPY(slot_getattr(slot, c->scopes, &isnull)));
	s->payload = PointerGetDatum(PG_DETOAST_DATUM_COPY(slot_getattr(slot, c->payload, &isnull)));
}

void
sync_capture_scan(TriggerData *td, SyncCaptureEvent ev, SyncCaptureScan *s)
{
	TupleDesc	desc = RelationGetDescr(td->tg_relation);
	Tuplestorestate *nts = ev == SYNC_EV_DELETE ? NULL : td->tg_newtable;
	Tuplestorestate *ots = ev == SYNC_EV_INSERT ? NULL : td->tg_oldtable;
	TupleTableSlot *nslot = NULL;
	TupleTableSlot *oslot = NULL;
	SyncSyncedCols c;
	int			cap = 4;

	memset(s, 0, sizeof(*s));
	s->parts = palloc(sizeof(char *) * cap);
	s->in_place = ev == SYNC_EV_UPDATE;
	sync_scan_synced_cols(desc, &c);
	if (nts != NULL)
	{
		nslot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
		sync_scan_tuplestore_rewind(nts);
	}
	if (ots != NULL)
	{
		oslot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
		sync_scan_tuplestore_rewind(ots);
	}
	for (;;)
	{
		bool		got_new = false;
		bool		got_old = false;
		bool		isnull;
		Datum		np = (Datum) 0;

		if (nts != NULL)
			got_new = tuplestore_gettupleslot(nts, true, false, nslot);
		if (ots != NULL)
			got_old = tuplestore_gettupleslot(ots, true, false, oslot);
		if (!got_new && !got_old)
			break;
		if (got_new)
		{
			np = slot_getattr(nslot, c.part, &isnull);
			note_partition(s, np, &cap);
			if (++s->nnew == 1)
				keep_row(s, nslot, &c);
		}
		if (got_old)
		{
			Datum		op = slot_getattr(oslot, c.part, &isnull);

			note_partition(s, op, &cap);
			s->nold++;
			if (s->in_place &&
				(!got_new || !text_equal(op, np) ||
				 !text_equal(slot_getattr(oslot, c.row, &isnull), slot_getattr(nslot, c.row, &isnull)) ||
				 !bytes_equal(slot_getattr(oslot, c.scopes, &isnull),
							  slot_getattr(nslot, c.scopes, &isnull))))
				s->in_place = false;
		}
		else if (got_new)
			s->in_place = false;
	}
	if (nslot)
		ExecDropSingleTupleTableSlot(nslot);
	if (oslot)
		ExecDropSingleTupleTableSlot(oslot);
	finish_partitions(s);
	s->one = s->nnew == 1 && (ev == SYNC_EV_INSERT || s->in_place);
	if (!s->one && s->row_id != NULL)
	{
		pfree(s->row_id);
		s->row_id = NULL;
	}
}
