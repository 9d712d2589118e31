# syncular — PGXS build.  `make && make install`, then `make installcheck` against a running server.
EXTENSION   = syncular
EXTVERSION  = 0.1.0
MODULE_big  = syncular

CODEC_SRCS  = $(sort $(wildcard src/codec/*.c))
ENGINE_SRCS = $(sort $(wildcard src/*.c))
OBJS        = $(ENGINE_SRCS:.c=.o) $(CODEC_SRCS:.c=.o)

# The install script is built from one file per concern under src/sql/, in name order.
SQL_PARTS   = $(sort $(wildcard src/sql/*.sql))
DATA_built  = $(EXTENSION)--$(EXTVERSION).sql
DATA        = $(wildcard upgrade/$(EXTENSION)--*--*.sql)

REGRESS      = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
REGRESS_OPTS = --load-extension=$(EXTENSION)
ISOLATION      = $(patsubst test/isolation/specs/%.spec,%,$(sort $(wildcard test/isolation/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test/isolation --load-extension=$(EXTENSION)

PG_CPPFLAGS = -I$(srcdir)/src -I$(srcdir)/src/codec
PG_CFLAGS   = -Wall -Werror -Wno-declaration-after-statement

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(EXTENSION)--$(EXTVERSION).sql: $(SQL_PARTS)
	cat $^ > $@

.PHONY: codec-check pgtap bench fuzz
codec-check:
	$(MAKE) -C test/codec check

pgtap:
	pg_prove --ext .sql -r test/pgtap

bench:
	bash bench/run.sh

fuzz:
	$(MAKE) -C test/fuzz run

# syncular-gateway (gateway/): a standalone program, not part of the PostgreSQL module.  It links
# the pure codec of src/codec/ (compiled again without -fPIC flags into gateway/build/) and knows
# the extension version it was built for.
GW_CC      ?= cc
GW_CFLAGS  ?= -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter
GW_SRCS     = $(sort $(wildcard gateway/*.c))
GW_OBJS     = $(patsubst gateway/%.c,gateway/build/%.o,$(GW_SRCS)) \
              $(patsubst src/codec/%.c,gateway/build/codec_%.o,$(CODEC_SRCS))
GW_INCLUDES = -Igateway -Isrc/codec -I$(shell $(PG_CONFIG) --includedir)
GW_LIBS     = -lwebsockets -L$(shell $(PG_CONFIG) --libdir) -lpq -ljwt -ljansson -lz -lm

.PHONY: gateway install-gateway gateway-check
gateway: gateway/syncular-gateway

gateway/build/%.o: gateway/%.c gateway/*.h Makefile
	@mkdir -p gateway/build
	$(GW_CC) $(GW_CFLAGS) $(GW_INCLUDES) -DGW_EXTVERSION='"$(EXTVERSION)"' -c -o $@ $<

gateway/build/codec_%.o: src/codec/%.c src/codec/*.h
	@mkdir -p gateway/build
	$(GW_CC) $(GW_CFLAGS) -Isrc/codec -c -o $@ $<

gateway/syncular-gateway: $(GW_OBJS)
	$(GW_CC) $(GW_CFLAGS) -o $@ $(GW_OBJS) $(GW_LIBS)

install: install-gateway
install-gateway: gateway/syncular-gateway
	$(INSTALL_PROGRAM) gateway/syncular-gateway '$(DESTDIR)$(bindir)/syncular-gateway'

gateway-check: gateway/syncular-gateway
	/usr/bin/python3 test/gateway/run.py

EXTRA_CLEAN += gateway/build gateway/syncular-gateway
