/* See include/crash_recorder.h. Everything the handler touches is prepared before it can run:
 * the marker descriptor, the plugin records (never freed or changed once added) and an
 * alternate signal stack for the main thread (a plugin that overflows its stack must still be
 * named). The handler calls only write(), sigaction() and raise(), which are async-signal-safe;
 * it formats the line by hand into a static buffer that only the first crashing thread uses. */
#define _GNU_SOURCE
#include "crash_recorder.h"

#include <errno.h>
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <ucontext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Thread_local termhost_call_slot_t termhost_current_call = { -1, NULL, NULL };

#define MAX_PLUGINS 1024
static const char *records[MAX_PLUGINS];
static volatile int32_t record_count;
static int marker = -1;
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP };
#define FATAL_COUNT ((int)(sizeof fatal_signals / sizeof fatal_signals[0]))
static struct sigaction previous_actions[FATAL_COUNT];
static int claimed;
static int installed;
static char line[16384];

/* Executable segments of plugin images: [start, end) and the plugin's index. Written at load
 * time only, before the count that publishes them. */
#define MAX_SEGMENTS 4096
static struct { uintptr_t start, end; int32_t plugin; } segments[MAX_SEGMENTS];
static volatile int32_t segment_count;

struct image_search { uintptr_t address; int32_t plugin; int found; };

static int add_segments(struct dl_phdr_info *info, size_t size, void *data) {
   struct image_search *search = data;
   int i, inside = 0;
   (void)size;
   for (i = 0; i < info->dlpi_phnum; i++) {
      const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
      uintptr_t start = info->dlpi_addr + ph->p_vaddr;
      if (ph->p_type == PT_LOAD && search->address >= start && search->address < start + ph->p_memsz) inside = 1;
   }
   if (!inside) return 0;
   for (i = 0; i < info->dlpi_phnum && segment_count < MAX_SEGMENTS; i++) {
      const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
      if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
      segments[segment_count].start = info->dlpi_addr + ph->p_vaddr;
      segments[segment_count].end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
      segments[segment_count].plugin = search->plugin;
      __atomic_store_n(&segment_count, segment_count + 1, __ATOMIC_RELEASE);
   }
   search->found = 1;
   return 1;
}

int termhost_crash_recorder_add_image(int32_t plugin, const void *address_in_image) {
   struct image_search search = { (uintptr_t)address_in_image, plugin, 0 };
   if (plugin < 0) return -1;
   dl_iterate_phdr(add_segments, &search);
   return search.found ? 0 : -1;
}

/* The instruction that faulted, from the handler's context (0 where unknown). */
static uintptr_t faulting_pc(void *context) {
   const ucontext_t *uc = context;
   if (!uc) return 0;
#if defined(__x86_64__)
   return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
   return (uintptr_t)uc->uc_mcontext.pc;
#else
   return 0;
#endif
}

static int32_t plugin_at(uintptr_t pc) {
   int32_t i, n = __atomic_load_n(&segment_count, __ATOMIC_ACQUIRE);
   for (i = 0; pc && i < n; i++) {
      if (pc >= segments[i].start && pc < segments[i].end) return segments[i].plugin;
   }
   return -1;
}

int32_t termhost_crash_recorder_add_plugin(const char *record) {
   char *copy;
   if (record_count >= MAX_PLUGINS) return -1;
   copy = strdup(record);
   if (!copy) return -1;
   records[record_count] = copy;
   return record_count++;
}

static size_t append(size_t at, const char *text) {
   while (text && *text && at < sizeof line - 2) line[at++] = *text++;
   return at;
}

static size_t append_number(size_t at, int n) {
   char digits[12];
   int count = 0;
   if (n < 0) n = 0;
   do { digits[count++] = (char)('0' + n % 10); n /= 10; } while (n > 0 && count < 11);
   while (count > 0 && at < sizeof line - 2) line[at++] = digits[--count];
   return at;
}

static void on_fatal_signal(int sig, siginfo_t *info, void *context) {
   termhost_call_slot_t slot = termhost_current_call;
   int i;
   /* No host call on this thread: a thread the plugin started, if the fault is in its code. */
   if (!slot.call && sig != SIGABRT) {
      int32_t owner = plugin_at(faulting_pc(context));
      if (owner >= 0) { slot.plugin = owner; slot.call = "thread"; slot.argument = NULL; }
   }
   if (slot.call && slot.plugin >= 0 && slot.plugin < record_count && marker >= 0
       && !__atomic_exchange_n(&claimed, 1, __ATOMIC_SEQ_CST)) {
      /* One line: "crash <signal>\t<call>\t<argument>\t<plugin record>\n" (see CrashMarker.swift). */
      size_t n = append(0, "crash ");
      n = append_number(n, sig);
      n = append(n, "\t");
      n = append(n, slot.call);
      n = append(n, "\t");
      n = append(n, slot.argument);
      n = append(n, "\t");
      n = append(n, records[slot.plugin]);
      line[n++] = '\n';
      while (write(marker, line, n) < 0 && errno == EINTR) {}
      /* Plugin code is at fault: the default action ends the process with 128 + sig. */
      signal(sig, SIG_DFL);
      raise(sig);
      return;
   }
   for (i = 0; i < FATAL_COUNT; i++) {
      if (fatal_signals[i] != sig) continue;
      if (previous_actions[i].sa_flags & SA_SIGINFO) {
         if (previous_actions[i].sa_sigaction) { previous_actions[i].sa_sigaction(sig, info, context); return; }
      } else if (previous_actions[i].sa_handler != SIG_DFL && previous_actions[i].sa_handler != SIG_IGN) {
         previous_actions[i].sa_handler(sig);
         return;
      }
   }
   signal(sig, SIG_DFL);
   raise(sig);
}

int termhost_crash_recorder_install(int marker_fd) {
   struct sigaction action;
   stack_t current;
   int i;
   /* Once per process: a second install would make the handler its own "previous" one. */
   if (installed) { marker = marker_fd; return 0; }
   installed = 1;
   marker = marker_fd;
   /* Keep an alternate stack someone (the Swift runtime) set up already; else add one. */
   if (sigaltstack(NULL, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
      stack_t alt;
      alt.ss_size = 64 * 1024;
      alt.ss_sp = malloc(alt.ss_size);
      alt.ss_flags = 0;
      if (alt.ss_sp) sigaltstack(&alt, NULL);
   }
   memset(&action, 0, sizeof action);
   action.sa_sigaction = on_fatal_signal;
   action.sa_flags = SA_SIGINFO | SA_ONSTACK;
   sigemptyset(&action.sa_mask);
   for (i = 0; i < FATAL_COUNT; i++) {
      if (sigaction(fatal_signals[i], &action, &previous_actions[i]) != 0) return -1;
   }
   return 0;
}
