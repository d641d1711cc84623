# The rules every C example shares: build the library from the SDK headers alone (no SwiftPM),
# then derive its manifest.json from the built library with the host's own probe, so the
# plugin's ID, version and features are written once, in its C code.
# Linked with full RELRO (-z relro -z now): every symbol is bound at load and the tables that
# hold their addresses are made read-only, so a memory bug cannot redirect a call through them.
# A plugin's Makefile sets PLUGIN_ID, LIBRARY and SOURCES, then includes this file:
#   make                                 -> build/$(PLUGIN_ID)/{manifest.json,$(LIBRARY)}
#   make OUT=/some/dir TERMHOST=/x/bin/termhost
SDK_INCLUDE ?= ../../include
OUT ?= build
CC ?= cc
CFLAGS ?= -std=c99 -Wall -Wextra -Werror -pedantic -O2
TERMHOST ?= termhost
BUNDLE := $(OUT)/$(PLUGIN_ID)

all: $(BUNDLE)/$(LIBRARY) $(BUNDLE)/manifest.json

$(BUNDLE)/$(LIBRARY): $(SOURCES) exports.map
	mkdir -p $(BUNDLE)
	$(CC) $(CFLAGS) -D_POSIX_C_SOURCE=200809L -fPIC -shared -I$(SDK_INCLUDE) \
	    -Wl,--version-script=exports.map -Wl,-z,relro,-z,now -o $@ $(SOURCES)

# Runs the library in termhost's probe child (never in make's process); a library that fails
# the probe prints its problems and leaves no manifest behind.
$(BUNDLE)/manifest.json: $(BUNDLE)/$(LIBRARY)
	$(TERMHOST) plugins manifest $< --output $@

clean:
	rm -rf build

.PHONY: all clean
