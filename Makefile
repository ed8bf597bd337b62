# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of rnic.ko (the Kbuild file lists the objects).
#
#   make                  build rnic.ko against KDIR
#   make check            W=1 + sparse (C=2) + checkpatch --strict + no
#                         import circle between drivers/ files; fails on
#                         any finding
#   make check-build      only the W=1 + sparse build (per KDIR)
#   make rnicsim          build the reference model (tools/rnicsim)
#   make test             the whole test suite (scripts/test.sh)
#   make demo             the demo on the emulated NIC (scripts/demo.sh)

KDIR ?= /lib/modules/$(shell uname -r)/build
CACHE ?= /var/cache/rnic

# Counter lists are X-macros (the efa pattern); checkpatch cannot tell
# such a list from a complex expression, so those files are checked with
# COMPLEX_MACRO and MACRO_ARG_REUSE off, everything else fully strict.
XMACRO_FILES := $(wildcard include/*.h) drivers/rnic_stats.h
SRC_FILES := $(filter-out $(XMACRO_FILES) %.mod.c, \
	$(wildcard drivers/*.c drivers/*.h kunit/*.c kunit/*.h tools/rnic_perf/*.[ch] \
	tools/rnic_scale/*.[ch]))
CHECKPATCH_FLAGS := --strict --no-tree --terse --show-types \
	--ignore FILE_PATH_CHANGES

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# DKMS runs "make clean" in /usr/src, where tools/rnicsim is not copied.
clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(if $(wildcard tools/rnicsim/Makefile),$(MAKE) -C tools/rnicsim clean)

# Rebuild from clean so every W=1 warning is seen, run sparse on every
# file, and treat any compiler, sparse or checkpatch finding as failure.
# check-build is the part that depends on KDIR (the suite runs it against
# Debian 12's 6.1 headers too); the modules it leaves are the ones
# "make" builds.
check-build:
	@mkdir -p $(CACHE)
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean >/dev/null
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 C=2 modules 2>&1 | tee $(CACHE)/check-build.log
	@if grep -E '(warning|error):' $(CACHE)/check-build.log; then \
		echo "make check: compiler/sparse findings above" >&2; exit 1; fi

check: check-build
	@python3 scripts/check-cycles.py $$(ls drivers/*.o | grep -v '\.mod\.o$$')
	@src=$$(scripts/linux-source.sh) && \
		$$src/scripts/checkpatch.pl $(CHECKPATCH_FLAGS) -f $(SRC_FILES)
	@src=$$(scripts/linux-source.sh) && \
		$$src/scripts/checkpatch.pl $(CHECKPATCH_FLAGS) \
		--ignore COMPLEX_MACRO,MACRO_ARG_REUSE -f $(XMACRO_FILES)
	@echo "make check: clean"

rnicsim:
	$(MAKE) -C tools/rnicsim

test:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

.PHONY: all modules clean check check-build rnicsim test demo
