/* The fatal-signal recorder: which plugin, and which call into it, a thread is inside when the
 * process dies of SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT or SIGTRAP (see Docs/Architecture.md,
 * "Crash containment").
 *
 * The host brackets every call into plugin code with termhost_call_enter / termhost_call_leave.
 * They only store three words in a per-thread slot (a C11 _Thread_local: a plugin call on
 * another thread records on that thread, and the handler runs on the thread that crashed), so
 * their cost is a few nanoseconds. The handler reads the slot, appends one line to a marker file
 * opened in advance, and re-raises the signal with its default action, so the exit status stays
 * 128 + the signal. */
#ifndef TERMHOST_CRASH_RECORDER_H
#define TERMHOST_CRASH_RECORDER_H

#include <stdint.h>

typedef struct termhost_call_slot {
   /* Index returned by termhost_crash_recorder_add_plugin; -1 outside plugin code. */
   int32_t plugin;
   /* "create", "activate", "run_command"...: a string that outlives the call. */
   const char *call;
   /* The feature ID or command name the call is about, or NULL; valid during the call. */
   const char *argument;
} termhost_call_slot_t;

extern _Thread_local termhost_call_slot_t termhost_current_call;

/* Marks the start of a call into plugin code; returns the slot as it was, for nesting (a
 * command that runs another plugin's command through the commands service). */
static inline termhost_call_slot_t termhost_call_enter(int32_t plugin, const char *call, const char *argument) {
   termhost_call_slot_t previous = termhost_current_call;
   termhost_current_call.plugin = plugin;
   termhost_current_call.call = call;
   termhost_current_call.argument = argument;
   /* The handler runs on this thread: the stores only must not move past the call. */
   __atomic_signal_fence(__ATOMIC_SEQ_CST);
   return previous;
}

static inline void termhost_call_leave(termhost_call_slot_t previous) {
   __atomic_signal_fence(__ATOMIC_SEQ_CST);
   termhost_current_call = previous;
}

/* Copies `record` (one line without newline: what the marker says about the plugin) and
 * returns its index for termhost_call_enter, or -1 when the table (1024 plugins) is full.
 * Called before any call into that plugin. */
int32_t termhost_crash_recorder_add_plugin(const char *record);

/* Records the executable segments of the loaded image that holds `address_in_image` as the
 * plugin's: a fault on a thread the plugin started itself (where no host call is in the slot)
 * is then attributed by the faulting instruction's address. Returns 0, or -1 when the image is
 * not found or the table (4096 segments) is full. */
int termhost_crash_recorder_add_image(int32_t plugin, const void *address_in_image);

/* Installs the handler for the six fatal signals, writing to `marker_fd` (opened by the caller
 * with O_APPEND). Returns 0, or -1 with errno. A crash outside plugin code writes nothing and
 * goes to the handler that was there before (the Swift runtime's backtracer), or the default. */
int termhost_crash_recorder_install(int marker_fd);

#endif
