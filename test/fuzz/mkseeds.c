/*
 * mkseeds.c — builds the fuzz seed corpus (test/fuzz/corpus/<target>/) from the golden vectors.
 *
 *   mkseeds <vectors dir> <corpus dir>
 *
 * message:    every request/ and response/ .bin (invalid ones included)
 * segment:    every segment/ .bin and every SEGMENT_INLINE payload of the response vectors
 * row_full:   every row of every decodable segment, behind its column table (fuzz_codec.c format)
 * row_sparse: the same rows re-encoded sparse (all columns present, then the PK alone)
 * json:       every .json rendering and the detailsJson / bootstrapState texts of the messages
 *
 * Plain C with the codec only: run by `make -C test/fuzz seeds` (the corpus is committed).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ssp.h"

#define MAX_COLS 12

static const char *corpus;
static int	nseeds;

static void
put(const char *target, const char *name, const void *p, size_t len)
{
	char		path[4096];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", corpus, target);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/%s/%s", corpus, target, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(p, 1, len, f) != len || fclose(f) != 0)
	{
		perror(path);
		exit(1);
	}
	nseeds++;
}

static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	uint8_t    *buf;
	long		n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? n : 1);
	if (fread(buf, 1, n, f) != (size_t) n)
		n = 0;
	fclose(f);
	*len = (size_t) n;
	return buf;
}

/* One row input: column table + [pk] + row bytes. */
static void
put_row(const char *target, const char *name, const SspColumn *cols, uint32_t ncols, int pk,
		const uint8_t *row, size_t len)
{
	uint8_t    *b = malloc(2 + ncols + len);
	size_t		n = 0;

	b[n++] = (uint8_t) (ncols - 1);
	for (uint32_t i = 0; i < ncols; i++)
		b[n++] = (uint8_t) ((cols[i].type - 1) | (cols[i].nullable ? 0x80 : 0));
	if (pk >= 0)
		b[n++] = (uint8_t) pk;
	memcpy(b + n, row, len);
	put(target, name, b, n + len);
	free(b);
}

static void
segment_seeds(const char *stem, const uint8_t *data, size_t len)
{
	SspSegment	seg;
	SspError	err;
	char		name[512];

	snprintf(name, sizeof(name), "%s.ssg2", stem);
	put("segment", name, data, len);
	memset(&seg, 0, sizeof(seg));
	if (!ssp_segment_decode(data, len, &seg, &err))
		return;
	if (seg.ncolumns >= 1 && seg.ncolumns <= MAX_COLS)
	{
		for (uint32_t b = 0; b < seg.nblocks; b++)
			for (uint32_t r = 0; r < seg.blocks[b].nrows && r < 4; r++)
			{
				const SspSegmentRow *row = &seg.blocks[b].rows[r];
				SspValue	vals[MAX_COLS];
				SspBuf		sp;

				snprintf(name, sizeof(name), "%s.b%u.r%u", stem, b, r);
				put_row("row_full", name, seg.columns, seg.ncolumns, -1, row->raw.ptr,
						row->raw.len);
				/* sparse: every column present, then only the first column (the PK) */
				memcpy(vals, row->values, sizeof(SspValue) * seg.ncolumns);
				for (int variant = 0; variant < 2; variant++)
				{
					for (uint32_t c = 0; c < seg.ncolumns; c++)
						vals[c].present = variant == 0 || c == 0;
					ssp_buf_init(&sp);
					if (ssp_row_encode_sparse(seg.columns, seg.ncolumns, 0, vals, &sp, &err))
					{
						snprintf(name, sizeof(name), "%s.b%u.r%u.%s", stem, b, r,
								 variant == 0 ? "all" : "pk");
						put_row("row_sparse", name, seg.columns, seg.ncolumns, 0, sp.data,
								sp.len);
					}
					ssp_buf_free(&sp);
				}
			}
	}
	ssp_segment_free(&seg);
}

static void
message_seeds(const char *stem, const uint8_t *data, size_t len)
{
	SspMessage	msg;
	SspError	err;
	char		name[512];

	snprintf(name, sizeof(name), "%s.ssp2", stem);
	put("message", name, data, len);
	memset(&msg, 0, sizeof(msg));
	if (!ssp_decode_message(data, len, &msg, &err))
		return;
	for (uint32_t i = 0; i < msg.nframes; i++)
	{
		const SspFrame *f = &msg.frames[i];

		if (f->unknown)
			continue;
		if (f->type == SSP_FRAME_SEGMENT_INLINE)
		{
			snprintf(name, sizeof(name), "%s.f%u", stem, i);
			segment_seeds(name, f->segment_inline.payload.ptr, f->segment_inline.payload.len);
		}
		else if (f->type == SSP_FRAME_SUB_END && f->sub_end.has_bootstrap_state)
		{
			snprintf(name, sizeof(name), "%s.f%u.state.json", stem, i);
			put("json", name, f->sub_end.bootstrap_state.ptr, f->sub_end.bootstrap_state.len);
		}
	}
	ssp_message_free(&msg);
}

static void
walk(const char *dir, const char *rel)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
	{
		char		path[4096];
		char		stem[1024];
		size_t		n = strlen(e->d_name);
		uint8_t    *data;
		size_t		len;
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		snprintf(stem, sizeof(stem), "%s%s%s", rel, rel[0] ? "-" : "", e->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		{
			walk(path, stem);
			continue;
		}
		if ((data = slurp(path, &len)) == NULL)
			continue;
		if (n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0)
		{
			stem[strlen(stem) - 4] = '\0';
			if (strncmp(stem, "segment", 7) == 0)
				segment_seeds(stem, data, len);
			else
				message_seeds(stem, data, len);
		}
		else if (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0)
			put("json", stem, data, len);
		free(data);
	}
	closedir(d);
}

int
main(int argc, char **argv)
{
	static const char *const snippets[] = {
		"{}", "[]", "null", "-0.0e+1", "\"\\ud800\"", "{\"a\":[1,{\"b\":\"\\u0000\"}]}",
		"{\"code\":\"app.x\",\"details\":{\"reason\":\"quota\"}}"
	};
	/* remote operation values (REMOTE.md §4): one of every tag, a request, nesting */
	static const char *const ops[] = {
		"{\"t\":\"null\"}",
		"{\"t\":\"object\",\"v\":[[\"revision\",{\"t\":\"integer\",\"v\":\"1\"}],[\"kind\",{\"t\":\"string\",\"v\":\"query\"}],"
		"[\"clientId\",{\"t\":\"string\",\"v\":\"c1\"}],[\"operationId\",{\"t\":\"string\",\"v\":\"q\"}],"
		"[\"params\",{\"t\":\"object\",\"v\":[[\"x\",{\"t\":\"bytes\",\"v\":\"AAE=\"}]]}]]}",
		"{\"t\":\"array\",\"v\":[{\"t\":\"number\",\"v\":1.5},{\"t\":\"boolean\",\"v\":true},"
		"{\"t\":\"integer\",\"v\":\"-9223372036854775808\"}]}"
	};
	char		name[64];

	if (argc != 3)
	{
		fprintf(stderr, "usage: mkseeds <vectors dir> <corpus dir>\n");
		return 2;
	}
	corpus = argv[2];
	mkdir(corpus, 0777);
	walk(argv[1], "");
	for (size_t i = 0; i < sizeof(snippets) / sizeof(snippets[0]); i++)
	{
		snprintf(name, sizeof(name), "snippet-%zu", i);
		put("json", name, snippets[i], strlen(snippets[i]));
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
	{
		snprintf(name, sizeof(name), "seed%zu", i);
		put("ops", name, ops[i], strlen(ops[i]));
	}
	printf("%d seeds in %s\n", nseeds, corpus);
	return 0;
}
