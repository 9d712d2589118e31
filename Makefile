# syncular — PGXS build.  `make && make install`, then `make installcheck` against a running server.
EXTENSION   = syncular
EXTVERSION  = 0.2.0
MODULE_big  = syncular

CODEC_SRCS  = $(sort $(wildcard src/codec/*.c))
ENGINE_SRCS = $(sort $(wildcard src/*.c))
OBJS        = $(ENGINE_SRCS:.c=.o) $(CODEC_SRCS:.c=.o)

# The install script is built from one file per concern under src/sql/, in name order.
SQL_PARTS   = $(sort $(wildcard src/sql/*.sql))
DATA_built  = $(EXTENSION)--$(EXTVERSION).sql
DATA        = upgrade/$(EXTENSION)--0.1.0.sql $(wildcard upgrade/$(EXTENSION)--*--*.sql)

REGRESS      = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
REGRESS_OPTS = --load-extension=$(EXTENSION)
ISOLATION      = $(patsubst test/isolation/specs/%.spec,%,$(sort $(wildcard test/isolation/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test/isolation --load-extension=$(EXTENSION)

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

$(EXTENSION)--$(EXTVERSION).sql: $(SQL_PARTS)
	cat $^ > $@

# The router extension (router/, a PGXS makefile of its own) is built and installed with this one.
all: router-all
install: router-install
clean: router-clean
.PHONY: router-all router-install router-clean
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

# PGXS tracks no header dependencies: rebuild every object when a header changes (a stale
# object built against an older struct layout crashes the backend).
$(ENGINE_SRCS:.c=.o) $(CODEC_SRCS:.c=.o): $(wildcard src/*.h src/codec/*.h)
