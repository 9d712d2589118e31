# syncular — PGXS build.  `make && make install`, then `make installcheck` against a running server.
EXTENSION   = syncular
EXTVERSION  = 0.7.0
MODULE_big  = syncular

CODEC_SRCS  = $(sort $(wildcard src/codec/*.c))
ENGINE_SRCS = $(sort $(wildcard src/*.c))
OBJS        = $(ENGINE_SRCS:.c=.o) $(CODEC_SRCS:.c=.o)

# Every script is built from skeletons and one source file per SQL object (scripts/sqlsrc.py,
# docs/CONTRIBUTING-internal.md): the install script from the skeletons src/sql/NN_*.sql in name
# order, the released base 0.1.0 and every upgrade script from its skeleton upgrade/<script>,
# each --#include line replaced by its file under src/sql/ (udfs/<name>/<version>.sql, ...).
SQL_PARTS   = $(sort $(wildcard src/sql/*.sql))
SQL_SOURCES = $(wildcard src/sql/*/*/*.sql)
SQL_SCRIPTS = $(notdir $(wildcard upgrade/$(EXTENSION)--*.sql))
DATA_built  = $(EXTENSION)--$(EXTVERSION).sql $(SQL_SCRIPTS)

REGRESS      = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
REGRESS_OPTS = --load-extension=$(EXTENSION)
ISOLATION      = $(patsubst test/isolation/specs/%.spec,%,$(sort $(wildcard test/isolation/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test/isolation --load-extension=$(EXTENSION)

# codec_vectors reads the golden vectors ($SYNCULAR_VECTORS, default ../shared/vectors) with
# pg_read_binary_file, i.e. as the server's user, which often cannot enter the clone's parent (a
# home folder, a mktemp -d).  installcheck therefore copies them to a world-readable folder in
# /tmp first (one per clone, replaced on every run) and points the test there; without the
# vectors (the folder is then absent too) the test skips and says so.
VECTORS_SRC := $(or $(SYNCULAR_VECTORS),$(CURDIR)/../shared/vectors)
VECTORS_COPY := /tmp/syncular-vectors-$(shell echo '$(CURDIR)' | cksum | cut -d' ' -f1)
REGRESS_PREP = vectors-copy
# (the rule below precedes PGXS's `all`: keep `make` with no target building the extension)
.DEFAULT_GOAL := all
.PHONY: vectors-copy
vectors-copy:
	@rm -rf '$(VECTORS_COPY)'
	@if [ -d '$(VECTORS_SRC)' ]; then \
	  mkdir -m 755 '$(VECTORS_COPY)' && cp -R '$(VECTORS_SRC)/.' '$(VECTORS_COPY)/' && \
	  chmod -R a+rX '$(VECTORS_COPY)'; \
	fi
installcheck: export SYNCULAR_VECTORS = $(VECTORS_COPY)

PG_CPPFLAGS = -I$(srcdir)/src -I$(srcdir)/src/codec
# Segment downloads compress per response (SPEC §5.8): libzstd, zlib (Debian libzstd-dev, zlib1g-dev);
# sqlite images (§5.3) are built with libsqlite3 (libsqlite3-dev).
SHLIB_LINK  = -lzstd -lz -lsqlite3
# -Wextra, less one class: -Wunused-parameter fires in PostgreSQL's own headers (lib/ilist.h,
# storage/bufpage.h inline functions) and on this code's seam callbacks, whose signatures are
# fixed by their callers.  Every other -Wextra class is clean (sign-compare, clobbered locals
# across PG_TRY, missing initializers).
PG_CFLAGS   = -Wall -Wextra -Wno-unused-parameter -Werror -Wno-declaration-after-statement

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(EXTENSION)--$(EXTVERSION).sql: $(SQL_PARTS) $(SQL_SOURCES) scripts/sql-include.awk
	awk -v root=src/sql -f scripts/sql-include.awk $(SQL_PARTS) > $@.tmp && mv $@.tmp $@

$(SQL_SCRIPTS): %.sql: upgrade/%.sql $(SQL_SOURCES) scripts/sql-include.awk
	awk -v root=src/sql -f scripts/sql-include.awk $< > $@.tmp && mv $@.tmp $@

# The scripts of both extensions, and the check of the layout: the released scripts built
# byte-identical to their sha256 in upgrade/released.sha256, the delta to the version in
# development including every newer source the install script includes, no source file unused.
.PHONY: sql-scripts sql-check
sql-scripts: $(DATA_built)
	$(MAKE) -C router sql-scripts PG_CONFIG=$(PG_CONFIG)

sql-check: sql-scripts
	python3 scripts/sqlsrc.py check
	bash test/sqlsrc/new_version.sh

# The router extension (router/, a PGXS makefile of its own) is built and installed with this one.
all: router-all
install: router-install
clean: router-clean
.PHONY: router-all router-install router-clean
# The router's wrappers are generated from this extension's install script: it is built here,
# before the recursion, so that a parallel make (-jN, as pg_buildext runs it) never has two makes
# writing it at once.
router-all router-install: $(EXTENSION)--$(EXTVERSION).sql
router-all:
	$(MAKE) -C router PG_CONFIG=$(PG_CONFIG)
router-install:
	$(MAKE) -C router install PG_CONFIG=$(PG_CONFIG)
router-clean:
	$(MAKE) -C router clean PG_CONFIG=$(PG_CONFIG)

.PHONY: codec-check pgtap bench fuzz
codec-check:
	$(MAKE) -C test/codec check

pgtap:
	pg_prove --ext .sql -r test/pgtap

bench:
	bash bench/run.sh

fuzz:
	$(MAKE) -C test/fuzz run
	$(MAKE) -C gateway/fuzz run

# syncular-gateway (gateway/): a standalone program, not part of the PostgreSQL module.  It links
# the pure codec of src/codec/ (compiled again, without the module's flags, into $(GW_BUILD)) and
# knows the extension version it was built for.  `make gateway-asan` builds a copy with
# AddressSanitizer/UBSan (gateway/syncular-gateway-asan) that the end-to-end tests run.
GW_CC      ?= cc
GW_CFLAGS  ?= -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter
GW_LDFLAGS ?=
GW_BUILD   ?= gateway/build
GW_BIN     ?= gateway/syncular-gateway
GW_SRCS     = $(sort $(wildcard gateway/*.c))
GW_OBJS     = $(patsubst gateway/%.c,$(GW_BUILD)/%.o,$(GW_SRCS)) \
              $(patsubst src/codec/%.c,$(GW_BUILD)/codec_%.o,$(CODEC_SRCS))
GW_INCLUDES = -Igateway -Isrc/codec -I$(shell $(PG_CONFIG) --includedir)
GW_LIBS     = -lmicrohttpd -lwslay -lcrypto -L$(shell $(PG_CONFIG) --libdir) -lpq -ljwt -ljansson -lz -ldeflate -lpthread -lm
GW_ASAN     = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter

.PHONY: gateway gateway-asan install-gateway gateway-check
gateway: $(GW_BIN)

gateway-asan:
	$(MAKE) gateway GW_BUILD=gateway/build-asan GW_BIN=gateway/syncular-gateway-asan GW_CFLAGS='$(GW_ASAN)'

$(GW_BUILD)/%.o: gateway/%.c gateway/*.h Makefile
	@mkdir -p $(GW_BUILD)
	$(GW_CC) $(GW_CFLAGS) $(GW_INCLUDES) -DGW_EXTVERSION='"$(EXTVERSION)"' -c -o $@ $<

$(GW_BUILD)/codec_%.o: src/codec/%.c src/codec/*.h
	@mkdir -p $(GW_BUILD)
	$(GW_CC) $(GW_CFLAGS) -Isrc/codec -c -o $@ $<

$(GW_BIN): $(GW_OBJS)
	$(GW_CC) $(GW_CFLAGS) $(GW_LDFLAGS) -o $@ $(GW_OBJS) $(GW_LIBS)

install: install-gateway
install-gateway: gateway/syncular-gateway
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) gateway/syncular-gateway '$(DESTDIR)$(bindir)/syncular-gateway'

# the end-to-end tests, against the sanitizer build, on the cluster of PGHOST/PGPORT
gateway-check: gateway-asan
	SYNCULAR_GATEWAY_BIN=gateway/syncular-gateway-asan /usr/bin/python3 test/gateway/run.py

EXTRA_CLEAN += gateway/build gateway/build-asan gateway/syncular-gateway gateway/syncular-gateway-asan

# TAP tests on PostgreSQL::Test::Cluster (test/t/*.pl, helpers in test/perl), as pgvector keeps
# them: the tests that need clusters of their own (several clusters and a standby, a preloaded
# library).  `make prove_installcheck [PROVE_TESTS=test/t/010_counters.pl] [PROVE_FLAGS=-v]`.
# Not part of `installcheck` (no TAP_TESTS: that would run them inside every pg_regress run).
# The nodes are served from the installation staged from this tree: $SYNCULAR_STAGE when set
# (scripts/stage.sh), otherwise one staged into tmp_check/stage; SYNCULAR_BIN (its bindir) goes
# first on PATH and is the nodes' install_path.  PostgreSQL refuses to run as root: as root, the
# tests run as user postgres (the tree must be readable by it; tmp_check is given to it).
TAP_AS_USER = $(if $(filter 0,$(shell id -u)),runuser -u postgres --)
.PHONY: prove_installcheck
prove_installcheck: gateway gateway-asan
	rm -rf '$(CURDIR)'/tmp_check
	$(MKDIR_P) '$(CURDIR)'/tmp_check
	stage=$${SYNCULAR_STAGE:-'$(CURDIR)'/tmp_check/stage}; \
	if [ -z "$$SYNCULAR_STAGE" ]; then bash scripts/stage.sh "$$stage" || exit 1; fi; \
	if [ -n '$(TAP_AS_USER)' ]; then chown -R postgres '$(CURDIR)'/tmp_check; \
	  $(TAP_AS_USER) test -r '$(CURDIR)'/test/perl/SyncularTest.pm || { \
	    echo "prove_installcheck: user postgres cannot read $(CURDIR) (a mode-700 folder on the way?)" >&2; exit 1; }; fi; \
	cd $(srcdir) && $(TAP_AS_USER) env TESTDIR='$(CURDIR)' SYNCULAR_STAGE="$$stage" \
	   SYNCULAR_BIN="$$stage$(bindir)" PATH="$$stage$(bindir):$$PATH" PGPORT='6$(DEF_PGPORT)' \
	   PG_REGRESS='$(top_builddir)/src/test/regress/pg_regress' \
	   $(PROVE) $(PG_PROVE_FLAGS) -I test/perl $(PROVE_FLAGS) $(if $(PROVE_TESTS),$(PROVE_TESTS),test/t/*.pl)

# PGXS tracks no header dependencies: rebuild every object when a header changes (a stale
# object built against an older struct layout crashes the backend).
$(ENGINE_SRCS:.c=.o) $(CODEC_SRCS:.c=.o): $(wildcard src/*.h src/codec/*.h)

# Debian packages (debian/: postgresql-15-syncular and syncular-gateway) built from a copy of
# the committed tree (HEAD) in a temporary directory, into $(DEB_OUT); nothing is written here.
# `make dist`: the PGXN archive of HEAD, syncular-$(EXTVERSION).zip (META.json).
DEB_OUT ?= $(CURDIR)/build/deb
.PHONY: deb dist
deb:
	bash scripts/deb.sh '$(DEB_OUT)'

dist:
	git archive --format=zip --prefix=$(EXTENSION)-$(EXTVERSION)/ -o $(EXTENSION)-$(EXTVERSION).zip HEAD
	python3 scripts/check-pgxn-dist.py $(EXTENSION)-$(EXTVERSION).zip
