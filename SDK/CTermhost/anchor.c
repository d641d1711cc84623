/* SwiftPM needs one source file per C target; the ABI itself is header-only. */
#include "../include/termhost/termhost.h"
