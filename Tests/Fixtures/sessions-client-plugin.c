/* A C plugin that uses the SSH plugin's persistent sessions (org.termhost.ssh.sessions/1) from
 * the header alone, as a web front end or the assistant would.
 *
 *   termhost sesscheck HOST   opens a session to HOST, attaches a sink, types a command and
 *                             waits for its output, resizes, reads the events, detaches, kills
 *                             the session and lists it; prints one line per step and "OK". */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <termhost/termhost.h>

static const termhost_host_t *g_host;

/* What the sink saw: written on the session's thread, read on the command's. */
struct seen {
   pthread_mutex_t lock;
   char output[65536];
   size_t size;
   int events;
   int closed;
};

static void on_output(void *user, const uint8_t *data, size_t size) {
   struct seen *s = user;
   pthread_mutex_lock(&s->lock);
   if (s->size + size < sizeof s->output - 1) {   /* enough for this check; the rest is dropped */
      memcpy(s->output + s->size, data, size);
      s->size += size;
      s->output[s->size] = 0;
   }
   pthread_mutex_unlock(&s->lock);
}
static void on_event(void *user, const char *json, size_t size) {
   struct seen *s = user;
   (void)json; (void)size;
   pthread_mutex_lock(&s->lock);
   s->events++;
   pthread_mutex_unlock(&s->lock);
}
static void on_closed(void *user, const char *reason) {
   struct seen *s = user;
   (void)reason;
   pthread_mutex_lock(&s->lock);
   s->closed++;
   pthread_mutex_unlock(&s->lock);
}

struct text { char data[8192]; };
static void keep(void *user, const void *data, size_t size) {
   struct text *t = user;
   size_t n = size < sizeof t->data - 1 ? size : sizeof t->data - 1;
   memcpy(t->data, data, n);
   t->data[n] = 0;
}

static int seen_text(struct seen *s, const char *needle) {
   int found;
   pthread_mutex_lock(&s->lock);
   found = strstr(s->output, needle) != NULL;
   pthread_mutex_unlock(&s->lock);
   return found;
}

static int32_t run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   const termhost_ssh_sessions_t *t = g_host->get_service(g_host, TERMHOST_SSH_SESSIONS);
   termhost_error_t err;
   struct text reply;
   char request[512], id[65];
   const char *at;
   static struct seen seen = { PTHREAD_MUTEX_INITIALIZER, {0}, 0, 0, 0 };
   termhost_ssh_session_sink_t sink;
   uint64_t attachment = 0;
   int i;
   const char *typed = "echo c-plugin-$((40+2))\n";
   (void)f;
   if (inv->argc != 1) return 2;
   if (!t || !TERMHOST_HAS_FIELD(t, termhost_ssh_sessions_t, kill)) {
      dprintf(inv->stderr_fd, "sesscheck: no sessions service\n");
      return 1;
   }
   snprintf(request, sizeof request, "{\"host\":\"%s\",\"columns\":80,\"rows\":24}", inv->argv[0]);
   if (t->open(t, request, keep, &reply, &err) != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "sesscheck: open: %s\n", err.message);
      return 1;
   }
   at = strstr(reply.data, "\"id\":\"");
   if (!at || sscanf(at + 6, "%64[0-9a-f]", id) != 1) return 1;
   dprintf(inv->stdout_fd, "OPENED %s\n", id);

   sink.struct_size = sizeof sink;
   sink.user = &seen;
   sink.output = on_output;
   sink.event = on_event;
   sink.closed = on_closed;
   if (t->attach(t, id, &sink, &attachment, &err) != TERMHOST_OK) return 1;
   if (t->write(t, id, (const uint8_t *)typed, strlen(typed), &err) != TERMHOST_OK) return 1;
   for (i = 0; i < 600 && !seen_text(&seen, "c-plugin-42"); i++) {
      struct timespec tenth = { 0, 100000000L };
      nanosleep(&tenth, NULL);
   }
   if (!seen_text(&seen, "c-plugin-42")) {
      dprintf(inv->stderr_fd, "sesscheck: no output: %s\n", seen.output);
      return 1;
   }
   dprintf(inv->stdout_fd, "OUTPUT c-plugin-42\n");
   if (t->resize(t, id, 100, 30, &err) != TERMHOST_OK) return 1;
   if (t->resize(t, id, 0, 30, &err) == TERMHOST_OK) return 1;
   dprintf(inv->stdout_fd, "RESIZE-REFUSED %d %s\n", (int)err.code, err.message);
   if (t->events(t, id, 0, keep, &reply, &err) != TERMHOST_OK) return 1;
   dprintf(inv->stdout_fd, "EVENTS %s\n", reply.data);
   if (t->detach(t, attachment, &err) != TERMHOST_OK || seen.closed != 1) return 1;
   if (t->detach(t, attachment, &err) == TERMHOST_OK) return 1;
   dprintf(inv->stdout_fd, "DETACHED %d\n", (int)err.code);
   if (t->kill(t, id, &err) != TERMHOST_OK) return 1;
   if (t->list(t, keep, &reply, &err) != TERMHOST_OK) return 1;
   dprintf(inv->stdout_fd, "LIST %s\n", reply.data);
   if (t->attach(t, "nosuch", &sink, &attachment, &err) == TERMHOST_OK) return 1;
   dprintf(inv->stdout_fd, "MISSING %d %s\n", (int)err.code, err.message);
   dprintf(inv->stdout_fd, "OK\n");
   return 0;
}

static const char *const required[] = { TERMHOST_SSH_SESSIONS, NULL };
static const char *const after[] = { "org.termhost.ssh", NULL };
static const termhost_command_descriptor_t cmd = {
   sizeof(termhost_command_descriptor_t), "sesscheck", "use persistent sessions from C", "usage: termhost sesscheck HOST"
};
static const termhost_command_descriptor_t *const cmds[] = { &cmd, NULL };
static const termhost_feature_descriptor_t descriptor = {
   sizeof(termhost_feature_descriptor_t), "org.test.sesscheck", "1.0.0", "Sessions check", NULL, 1000,
   TERMHOST_SCOPE_PROCESS, after, NULL, NULL, required, NULL, cmds, NULL, NULL, 0 /* concurrent_commands */
};
static const termhost_feature_t instance = {
   sizeof(termhost_feature_t), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, run
};
static uint32_t count(const termhost_feature_factory_t *x) { (void)x; return 1; }
static const termhost_feature_descriptor_t *get(const termhost_feature_factory_t *x, uint32_t i) {
   (void)x;
   return i == 0 ? &descriptor : NULL;
}
static termhost_feature_t *create(const termhost_feature_factory_t *x, const char *id, const termhost_scene_info_t *s,
                                  termhost_error_t *e) {
   (void)x; (void)id; (void)s; (void)e;
   return (termhost_feature_t *)&instance;
}
static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), count, get, create };
static bool init(const termhost_host_t *host, termhost_error_t *err) { (void)err; g_host = host; return true; }
static void deinit(void) { g_host = NULL; }
static const void *get_factory(const char *id) { return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL; }
static const termhost_plugin_entry_t entry = {
   TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), "org.test.sesscheck", "1.0.0", init, deinit, get_factory
};
TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
