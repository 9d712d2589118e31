/*
 * grammar.c — the SSP2 message grammar (WF §3.1, §3.3): the frame types registered for each
 * kind of message and their names, and which frame may follow which in a request or a
 * response, stepped frame by frame by the decoder (wire.c) and the streaming writers
 * (wire_write.c).
 */
#include "ssp_internal.h"

#include <stdio.h>
#include <string.h>

bool
ssp_frame_registered(uint8_t kind, uint8_t type)
{
	if (type == SSP_FRAME_END)
		return true;
	if (kind == SSP_KIND_REQUEST)
		return type >= SSP_FRAME_REQ_HEADER && type <= SSP_FRAME_SUBSCRIPTION;
	if (kind == SSP_KIND_RESPONSE)
		return (type >= SSP_FRAME_RESP_HEADER && type <= SSP_FRAME_SUB_END) ||
			type == SSP_FRAME_LEASE || type == SSP_FRAME_PUSH_RESULT_DETAILS ||
			type == SSP_FRAME_ERROR;
	return false;
}

bool
ssp_frame_registered_any(uint8_t type)
{
	return ssp_frame_registered(SSP_KIND_REQUEST, type) ||
		ssp_frame_registered(SSP_KIND_RESPONSE, type);
}

const char *
ssp_frame_name(uint8_t type)
{
	switch (type)
	{
		case SSP_FRAME_END: return "END";
		case SSP_FRAME_REQ_HEADER: return "REQ_HEADER";
		case SSP_FRAME_PUSH_COMMIT: return "PUSH_COMMIT";
		case SSP_FRAME_PULL_HEADER: return "PULL_HEADER";
		case SSP_FRAME_SUBSCRIPTION: return "SUBSCRIPTION";
		case SSP_FRAME_RESP_HEADER: return "RESP_HEADER";
		case SSP_FRAME_PUSH_RESULT: return "PUSH_RESULT";
		case SSP_FRAME_SUB_START: return "SUB_START";
		case SSP_FRAME_COMMIT: return "COMMIT";
		case SSP_FRAME_SEGMENT_REF: return "SEGMENT_REF";
		case SSP_FRAME_SEGMENT_INLINE: return "SEGMENT_INLINE";
		case SSP_FRAME_SUB_END: return "SUB_END";
		case SSP_FRAME_LEASE: return "LEASE";
		case SSP_FRAME_PUSH_RESULT_DETAILS: return "PUSH_RESULT_DETAILS";
		case SSP_FRAME_ERROR: return "ERROR";
		default: return NULL;
	}
}

void
ssp_grammar_init(SspGrammar *g, uint8_t kind)
{
	memset(g, 0, sizeof(*g));
	g->kind = kind;
}

static bool
gfail(SspGrammar *g, SspError *err, const char *what)
{
	return ssp_fail(err, INV, "%s: %s (frame #%u)",
					g->kind == SSP_KIND_REQUEST ? "request" : "response", what,
					g->count);
}

static bool
details_follow_ok(const SspGrammar *g, const SspFrame *f, SspError *err)
{
	const SspFrame *p = g->prev;
	const SspPushResultDetails *d = &f->push_result_details;

	if (p == NULL || p->unknown || p->type != SSP_FRAME_PUSH_RESULT)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS does not directly follow a PUSH_RESULT");
	if (p->push_result.status != SSP_PUSH_REJECTED)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS follows a non-rejected PUSH_RESULT");
	if (p->push_result.client_commit_id.len != d->client_commit_id.len ||
		memcmp(p->push_result.client_commit_id.ptr, d->client_commit_id.ptr,
			   d->client_commit_id.len) != 0)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS clientCommitId does not match its PUSH_RESULT");
	for (uint32_t i = 0; i < d->nentries; i++)
	{
		bool        found = false;

		for (uint32_t j = 0; j < p->push_result.nresults && !found; j++)
			found = p->push_result.results[j].op_index == d->entries[i].op_index &&
				p->push_result.results[j].status == SSP_RESULT_ERROR;
		if (!found)
			return ssp_fail(err, INV,
							"PUSH_RESULT_DETAILS opIndex %d names no error record",
							(int) d->entries[i].op_index);
	}
	return true;
}

bool
ssp_grammar_step(SspGrammar *g, const SspFrame *f, SspError *err)
{
	uint8_t     t = f->type;
	bool        unk = f->unknown;

	if (g->count == 0)
	{
		uint8_t     hdr = g->kind == SSP_KIND_REQUEST ? SSP_FRAME_REQ_HEADER : SSP_FRAME_RESP_HEADER;

		if (unk || t != hdr)
			return gfail(g, err, g->kind == SSP_KIND_REQUEST ?
						 "first frame must be REQ_HEADER" : "first frame must be RESP_HEADER");
		g->count = 1;
		g->prev = f;
		return true;
	}
	if (!unk && (t == SSP_FRAME_END || !ssp_frame_registered(g->kind, t)))
	{
		char        m[64];

		snprintf(m, sizeof(m), "frame type 0x%02x not allowed here", t);
		return gfail(g, err, m);
	}
	if (g->kind == SSP_KIND_REQUEST)
	{
		if (!unk)
			switch (t)
			{
				case SSP_FRAME_REQ_HEADER:
					return gfail(g, err, "second REQ_HEADER");
				case SSP_FRAME_PUSH_COMMIT:
					if (g->seen_pull)
						return gfail(g, err, "PUSH_COMMIT after PULL_HEADER");
					g->seen_push = true;
					break;
				case SSP_FRAME_PULL_HEADER:
					if (g->seen_pull)
						return gfail(g, err, "second PULL_HEADER");
					g->seen_pull = true;
					break;
				case SSP_FRAME_SUBSCRIPTION:
					if (!g->seen_pull)
						return gfail(g, err, "SUBSCRIPTION without a preceding PULL_HEADER");
					break;
			}
	}
	else
	{
		if (g->seen_error)
			return gfail(g, err, "frame after ERROR");
		if (!unk)
			switch (t)
			{
				case SSP_FRAME_RESP_HEADER:
					return gfail(g, err, "second RESP_HEADER");
				case SSP_FRAME_LEASE:
					if (g->seen_lease)
						return gfail(g, err, "second LEASE");
					if (g->body_seen)
						return gfail(g, err, "LEASE after another body frame");
					g->seen_lease = true;
					break;
				case SSP_FRAME_PUSH_RESULT:
					if (g->seen_sub_start)
						return gfail(g, err, "PUSH_RESULT after SUB_START");
					break;
				case SSP_FRAME_PUSH_RESULT_DETAILS:
					if (g->seen_sub_start)
						return gfail(g, err, "PUSH_RESULT_DETAILS after SUB_START");
					if (!details_follow_ok(g, f, err))
						return false;
					break;
				case SSP_FRAME_SUB_START:
					if (g->sub_open)
						return gfail(g, err, "nested SUB_START");
					g->sub_open = true;
					g->seen_sub_start = true;
					g->sub_content = 0;
					break;
				case SSP_FRAME_COMMIT:
					if (!g->sub_open)
						return gfail(g, err, "COMMIT outside a subscription");
					if (g->sub_content == 2)
						return gfail(g, err, "COMMIT mixed with segments");
					g->sub_content = 1;
					break;
				case SSP_FRAME_SEGMENT_REF:
				case SSP_FRAME_SEGMENT_INLINE:
					if (!g->sub_open)
						return gfail(g, err, "segment outside a subscription");
					if (g->sub_content == 1)
						return gfail(g, err, "segment mixed with COMMIT");
					g->sub_content = 2;
					break;
				case SSP_FRAME_SUB_END:
					if (!g->sub_open)
						return gfail(g, err, "SUB_END outside a subscription");
					g->sub_open = false;
					break;
				case SSP_FRAME_ERROR:
					g->seen_error = true;
					break;
			}
		g->body_seen = true;
	}
	g->count++;
	g->prev = f;
	return true;
}

bool
ssp_grammar_finish(SspGrammar *g, SspError *err)
{
	if (g->count == 0)
		return gfail(g, err, "no header frame");
	if (g->kind == SSP_KIND_REQUEST && !g->seen_push && !g->seen_pull)
		return gfail(g, err, "neither PUSH_COMMIT nor PULL_HEADER");
	if (g->kind == SSP_KIND_RESPONSE && g->sub_open && !g->seen_error)
		return gfail(g, err, "subscription still open at END");
	return true;
}
