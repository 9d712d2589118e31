/*
 * vectors.c — golden-vector conformance runner for the SSP2 codec (TAP).
 *
 * Usage: vectors [VECTORS_DIR]   (default ../shared/vectors)
 *
 * For every folder with a manifest.json (request/, response/, segment/,
 * push/): each valid case must (1) decode, (2) render deep-equal to its
 * .json, (3) re-encode byte-identically; each invalid case must fail with
 * the manifest's error code.  Row payloads inside messages are also decoded
 * against the NOTES test table and re-encoded byte-identically.
 */
#include "testlib.h"

#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>

static char *
read_file(const char *path, size_t *len)
{
	FILE       *f = fopen(path, "rb");
	char       *buf;
	long        n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
	{
		fclose(f);
		return NULL;
	}
	buf = malloc((size_t) n + 1);
	if (buf && fread(buf, 1, (size_t) n, f) != (size_t) n)
	{
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf)
	{
		buf[n] = '\0';
		*len = (size_t) n;
	}
	return buf;
}

static const SspJson *
jget(const SspJson *o, const char *k)
{
	SspStr      s = {k, (uint32_t) strlen(k)};

	if (o == NULL || o->kind != SSP_JSON_OBJECT)
		return NULL;
	return json_get(o, &s);
}

static const char *
jstr(const SspJson *o, const char *k)
{
	const SspJson *v = jget(o, k);

	return v && v->kind == SSP_JSON_STRING ? v->text.ptr : NULL;
}

/* Decode a row blob against NOTES and re-encode it. */
static void
check_row(const char *label, const SspBytes *row, bool sparse, uint32_t ncols)
{
	SspArena   *a = ssp_arena_new();
	SspValue    vals[9];
	SspError    err = {0};
	SspBuf      out;
	bool        ok;

	ssp_buf_init(&out);
	if (sparse)
		ok = ssp_row_decode_sparse(a, notes_cols, ncols, 0, row->ptr, row->len, vals, &err);
	else
		ok = ssp_row_decode_full(a, notes_cols, ncols, row->ptr, row->len, vals, &err);
	if (ok)
		ok = sparse ? ssp_row_encode_sparse(notes_cols, ncols, 0, vals, &out, &err)
			: ssp_row_encode_full(notes_cols, ncols, vals, &out, &err);
	if (!ok)
		tap_diag("%s: %s", err.code, err.message);
	tap_ok(ok && hexdiff(out.data, out.len, row->ptr, row->len),
		   "%s: row decodes against NOTES and re-encodes identically", label);
	ssp_buf_free(&out);
	ssp_arena_free(a);
}

static void
check_message_rows(const char *name, const SspMessage *m)
{
	char        label[160];

	for (uint32_t i = 0; i < m->nframes; i++)
	{
		const SspFrame *f = &m->frames[i];

		if (f->unknown)
			continue;
		if (f->type == SSP_FRAME_PUSH_COMMIT)
			for (uint32_t k = 0; k < f->push_commit.nops; k++)
			{
				const SspPushOp *op = &f->push_commit.ops[k];

				if (!op->has_payload || op->table.len != 5 || memcmp(op->table.ptr, "notes", 5))
					continue;
				snprintf(label, sizeof(label), "%s frame %u op %u", name, i, k);
				check_row(label, &op->payload, m->wire_version >= 3, 8);
			}
		if (f->type == SSP_FRAME_COMMIT)
			for (uint32_t k = 0; k < f->commit.nchanges; k++)
			{
				const SspChange *ch = &f->commit.changes[k];
				const SspStr *t = &f->commit.tables[ch->table_index];

				if (!ch->has_row || t->len != 5 || memcmp(t->ptr, "notes", 5))
					continue;
				snprintf(label, sizeof(label), "%s frame %u change %u", name, i, k);
				check_row(label, &ch->row, false, 8);
			}
		if (f->type == SSP_FRAME_PUSH_RESULT)
			for (uint32_t k = 0; k < f->push_result.nresults; k++)
				if (f->push_result.results[k].status == SSP_RESULT_CONFLICT)
				{
					snprintf(label, sizeof(label), "%s frame %u serverRow %u", name, i, k);
					check_row(label, &f->push_result.results[k].server_row, false, 8);
				}
	}
}

/*
 * Every COMMIT frame of a vector, streamed change by change (ssp_commit_begin/_add/_end, the
 * pull's writer), is the same bytes as that frame through ssp_write_frame (WF §3.4).
 */
static void
check_commit_writer(const char *name, const SspMessage *m)
{
	uint32_t    ncommits = 0;
	bool        ok = true;

	for (uint32_t i = 0; i < m->nframes; i++)
	{
		const SspFrame *f = &m->frames[i];
		const SspCommit *c = &f->commit;
		SspBuf      a,
					b;
		SspError    err;
		SspCommitWriter w;
		bool        same;

		if (f->unknown || f->type != SSP_FRAME_COMMIT)
			continue;
		ncommits++;
		ssp_buf_init(&a);
		ssp_buf_init(&b);
		same = ssp_write_frame(&a, m->wire_version, f, &err) &&
			ssp_commit_begin(&w, &b, c->commit_seq, c->created_at_ms, &c->actor_id, c->ntables,
							 c->tables, &err);
		for (uint32_t k = 0; same && k < c->nchanges; k++)
			same = ssp_commit_add(&w, &c->changes[k], &err);
		same = same && ssp_commit_end(&w, &err) && a.len == b.len &&
			memcmp(a.data, b.data, a.len) == 0;
		ok = ok && same;
		ssp_buf_free(&a);
		ssp_buf_free(&b);
	}
	if (ncommits > 0)
		tap_ok(ok, "%s: %u COMMIT frame(s) streamed by the commit writer: the same bytes", name,
			   ncommits);
}

/* whether a decoded message asks for a bootstrap: the rule ssp_request_bootstraps reads */
static bool
asks_bootstrap(const SspMessage *m)
{
	if (m->kind != SSP_KIND_REQUEST)
		return false;
	for (uint32_t i = 0; i < m->nframes; i++)
		if (m->frames[i].type == SSP_FRAME_SUBSCRIPTION &&
			(m->frames[i].subscription.cursor < 0 || m->frames[i].subscription.has_bootstrap_state))
			return true;
	return false;
}

/*
 * ssp_request_pushes (classify.c) against the decoded message: the vector as it is, and every
 * truncation of it (a truncated request says false unless the PUSH_COMMIT frame is whole in it)
 */
static void
check_pushes(const char *kind, const char *name, const SspMessage *m, const uint8_t *data, size_t len)
{
	bool		pushes = false;
	bool		ok;

	for (uint32_t j = 0; j < m->nframes; j++)
		pushes |= m->kind == SSP_KIND_REQUEST && m->frames[j].type == SSP_FRAME_PUSH_COMMIT;
	ok = ssp_request_pushes(data, len) == pushes;
	for (size_t n = 0; ok && n < len; n++)
		ok = !ssp_request_pushes(data, n) || pushes;
	tap_ok(ok, "%s/%s: ssp_request_pushes says whether it holds a push (%s)",
		   kind, name, pushes ? "it does" : "it does not");
}

/*
 * ssp_request_bootstraps (classify.c) against the decoded message: the whole vector, then each
 * SUBSCRIPTION alone asking (the others made incremental, re-encoded), then every truncation of
 * the bytes (read safely: valgrind runs this).
 */
static void
check_classify(const char *kind, const char *name, SspMessage *m, const uint8_t *data, size_t len)
{
	bool		asks = asks_bootstrap(m);
	bool		ok = ssp_request_bootstraps(data, len) == asks;
	SspSubscription *saved = calloc(m->nframes + 1, sizeof(SspSubscription));
	int			alone = 0;

	for (uint32_t j = 0; j < m->nframes; j++)
		if (m->frames[j].type == SSP_FRAME_SUBSCRIPTION)
			saved[j] = m->frames[j].subscription;
	for (uint32_t i = 0; ok && i < m->nframes && m->kind == SSP_KIND_REQUEST; i++)
	{
		SspBuf		b;
		SspError	err = {0};

		if (m->frames[i].type != SSP_FRAME_SUBSCRIPTION)
			continue;
		for (uint32_t j = 0; j < m->nframes; j++)
			if (j != i && m->frames[j].type == SSP_FRAME_SUBSCRIPTION)
			{
				m->frames[j].subscription.cursor = 7;
				m->frames[j].subscription.has_bootstrap_state = false;
			}
		ssp_buf_init(&b);
		ok = ssp_encode_message(m, &b, &err) &&
			ssp_request_bootstraps(b.data, b.len) == asks_bootstrap(m);
		alone += asks_bootstrap(m);
		ssp_buf_free(&b);
		for (uint32_t j = 0; j < m->nframes; j++)
			if (m->frames[j].type == SSP_FRAME_SUBSCRIPTION)
				m->frames[j].subscription = saved[j];
	}
	free(saved);
	for (size_t n = 0; n < len; n++)
		(void) ssp_request_bootstraps(data, n);
	tap_ok(ok, "%s/%s: ssp_request_bootstraps says whether it asks for a bootstrap (%s; %d subscription(s) asking alone)",
		   kind, name, asks ? "it does" : "it does not", alone);
	check_pushes(kind, name, m, data, len);
}

static void
run_valid(const char *dir, const char *kind, const SspJson *c)
{
	const char *name = jstr(c, "name");
	const char *bin = jstr(c, "bin");
	const char *json = jstr(c, "json");
	char        path[2200];
	char       *data = NULL,
			   *expect = NULL;
	size_t      dlen = 0,
				elen = 0;
	SspError    err = {0};
	SspBuf      r,
				e;
	bool        ok;
	bool        is_seg = strcmp(kind, "segment") == 0;
	SspMessage  m;
	SspSegment  s;

	ssp_buf_init(&r);
	ssp_buf_init(&e);
	if (!name || !bin || !json)
	{
		tap_ok(0, "%s: malformed manifest case", kind);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, bin);
	data = read_file(path, &dlen);
	snprintf(path, sizeof(path), "%s/%s", dir, json);
	expect = read_file(path, &elen);
	if (!data || !expect)
	{
		tap_ok(0, "%s/%s: files readable", kind, name);
		goto out;
	}

	if (is_seg)
		ok = ssp_segment_decode((const uint8_t *) data, dlen, &s, &err);
	else
		ok = ssp_decode_message((const uint8_t *) data, dlen, &m, &err);
	if (!ok)
		tap_diag("%s: %s", err.code, err.message);
	tap_ok(ok, "%s/%s: decodes", kind, name);
	if (!ok)
	{
		tap_ok(0, "%s/%s: render equals .json (not decoded)", kind, name);
		tap_ok(0, "%s/%s: re-encodes byte-identically (not decoded)", kind, name);
		goto out;
	}

	ok = is_seg ? ssp_render_segment(&s, &r, &err) : ssp_render_message(&m, &r, &err);
	ok = ok && json_text_equal((const char *) r.data, r.len, expect, elen);
	if (!ok)
		tap_diag("rendered: %.*s", (int) (r.len > 3000 ? 3000 : r.len), (const char *) r.data);
	tap_ok(ok, "%s/%s: render deep-equals .json", kind, name);

	ok = is_seg ? ssp_segment_encode(&s, &e, &err) : ssp_encode_message(&m, &e, &err);
	if (!ok)
		tap_diag("%s: %s", err.code, err.message);
	tap_ok(ok && hexdiff(e.data, e.len, (const uint8_t *) data, dlen),
		   "%s/%s: re-encodes byte-identically", kind, name);

	if (is_seg)
		ssp_segment_free(&s);
	else
	{
		check_message_rows(name, &m);
		check_commit_writer(name, &m);
		check_classify(kind, name, &m, (const uint8_t *) data, dlen);
		ssp_message_free(&m);
	}
out:
	ssp_buf_free(&r);
	ssp_buf_free(&e);
	free(data);
	free(expect);
}

static void
run_invalid(const char *dir, const char *kind, const SspJson *c,
			const SspColumn *cols, uint32_t ncols, uint32_t pk)
{
	const char *name = jstr(c, "name");
	const char *bin = jstr(c, "bin");
	const char *code = jstr(c, "error");
	char        path[2200];
	char       *data;
	size_t      dlen = 0;
	SspError    err = {0};
	bool        ok;

	if (!name || !bin || !code)
	{
		tap_ok(0, "%s: malformed manifest invalid case", kind);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, bin);
	data = read_file(path, &dlen);
	if (!data)
	{
		tap_ok(0, "%s/invalid/%s: file readable", kind, name);
		return;
	}
	if (strcmp(kind, "segment") == 0)
		ok = ssp_segment_decode((const uint8_t *) data, dlen, NULL, &err);
	else if (strcmp(kind, "push") == 0)
		ok = ssp_row_decode_sparse(NULL, cols, ncols, pk, (const uint8_t *) data, dlen,
								   NULL, &err);
	else
	{
		SspMessage  m;

		ok = ssp_decode_message((const uint8_t *) data, dlen, &m, &err);
		if (ok)
			ssp_message_free(&m);
	}
	if (!ok)
		tap_diag("got %s: %s", err.code, err.message);
	tap_ok(!ok && err.code && strcmp(err.code, code) == 0,
		   "%s/invalid/%s: rejected with %s", kind, name, code);
	free(data);
}

/* push/ (wire-3 sparse rows): valid cases decode against NOTES+doc and
 * re-encode byte-identically.  The .json rendering shape of a bare sparse
 * row is not known here, so it is not compared (UNCONFIRMED). */
static void
run_push_valid(const char *dir, const SspJson *c)
{
	const char *name = jstr(c, "name");
	const char *bin = jstr(c, "bin");
	char        path[2200];
	char       *data;
	size_t      dlen = 0;
	SspBytes    b;

	if (!name || !bin)
	{
		tap_ok(0, "push: malformed manifest case");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, bin);
	data = read_file(path, &dlen);
	if (!data)
	{
		tap_ok(0, "push/%s: file readable", name);
		return;
	}
	b.ptr = (const uint8_t *) data;
	b.len = (uint32_t) dlen;
	check_row(name, &b, true, 9);
	free(data);
}

/* What the closing line reports: the sets run (with their case counts) and the sets skipped. */
static char ran_sets[512];
static char skipped_sets[512];
static int	nran,
			nskipped;

static void
note_set(char *list, size_t size, int *n, const char *fmt, const char *kind, unsigned count)
{
	size_t		used = strlen(list);

	snprintf(list + used, size - used, fmt, *n ? ", " : "", kind, count);
	(*n)++;
}

/* Returns false when the folder has no manifest (the set is absent: a skip). */
static bool
run_folder(const char *root, const char *kind)
{
	char        dir[1024],
				path[1100];
	char       *text;
	size_t      len = 0;
	SspArena   *a;
	SspJson    *man;
	const SspJson *cases,
			   *inv;
	unsigned	ncases = 0;

	snprintf(dir, sizeof(dir), "%s/%s", root, kind);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	text = read_file(path, &len);
	if (!text)
	{
		tap_diag("%s: no manifest, skipped", kind);
		note_set(skipped_sets, sizeof(skipped_sets), &nskipped, "%s%s (no manifest)%.0u", kind, 0);
		return false;
	}
	a = ssp_arena_new();
	if (!ssp_json_parse(a, text, len, &man, NULL))
	{
		tap_ok(0, "%s/manifest.json parses", kind);
		goto out;
	}
	cases = jget(man, "cases");
	inv = jget(man, "invalid");
	for (uint32_t i = 0; cases && cases->kind == SSP_JSON_ARRAY && i < cases->count; i++, ncases++)
	{
		if (strcmp(kind, "push") == 0)
			run_push_valid(dir, &cases->items[i]);
		else
			run_valid(dir, kind, &cases->items[i]);
	}
	for (uint32_t i = 0; inv && inv->kind == SSP_JSON_ARRAY && i < inv->count; i++, ncases++)
		run_invalid(dir, kind, &inv->items[i], notes_cols, 9, 0);
	/* a manifest that lists nothing would make the set pass without a check */
	tap_ok(ncases > 0, "%s: the manifest lists cases", kind);
out:
	note_set(ran_sets, sizeof(ran_sets), &nran, "%s%s (%u cases)", kind, ncases);
	ssp_arena_free(a);
	free(text);
	return true;
}

static bool
known_kind(const char *name, const char *const *kinds, size_t nkinds)
{
	for (size_t i = 0; i < nkinds; i++)
		if (strcmp(name, kinds[i]) == 0)
			return true;
	return false;
}

/*
 * Every set the folder has runs; the closing comment line names the sets run and the sets
 * skipped.  A folder with a manifest this runner does not know fails (a new kind of vectors
 * must get a runner, not be ignored).  SYNCULAR_REQUIRE_VECTORS=1 turns an absent folder or set
 * into a failure (CI, where ../shared is known to be there).
 */
int
main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "../shared/vectors";
	static const char *const kinds[] = {"request", "response", "segment", "push"};
	const size_t nkinds = sizeof(kinds) / sizeof(kinds[0]);
	const char *req = getenv("SYNCULAR_REQUIRE_VECTORS");
	bool		required = req != NULL && strcmp(req, "1") == 0;
	struct stat st;
	DIR		   *d;
	struct dirent *e;

	if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
	{
		if (required)
		{
			tap_ok(0, "vectors folder present (%s; SYNCULAR_REQUIRE_VECTORS=1)", root);
			return tap_done();
		}
		printf("1..0 # SKIP vectors folder absent (%s)\n", root);
		printf("# vectors: 0 sets run; skipped: all (folder absent: %s)\n", root);
		return 0;
	}
	for (size_t i = 0; i < nkinds; i++)
		if (!run_folder(root, kinds[i]) && required && strcmp(kinds[i], "push") != 0)
			tap_ok(0, "%s: vector set present (SYNCULAR_REQUIRE_VECTORS=1)", kinds[i]);
	d = opendir(root);
	while (d != NULL && (e = readdir(d)) != NULL)
	{
		char		path[2048];

		if (e->d_name[0] == '.' || known_kind(e->d_name, kinds, nkinds))
			continue;
		snprintf(path, sizeof(path), "%s/%s/manifest.json", root, e->d_name);
		if (stat(path, &st) == 0)
			tap_ok(0, "%s: a vector set without a runner in vectors.c", e->d_name);
	}
	if (d != NULL)
		closedir(d);
	printf("# vectors: %d sets run: %s; skipped: %s\n", nran, nran ? ran_sets : "none",
		   nskipped ? skipped_sets : "none");
	return tap_done();
}
