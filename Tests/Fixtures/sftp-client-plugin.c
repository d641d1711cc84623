/* A C plugin for the tests: `termhost sfc ...` uses the SFTP plugin's files service
 * (org.termhost.sftp.files/1) the way a third-party plugin would, and prints each result.
 *   sfc browse DEST DIR            list, make, rename, stat, read, remove; then a stale handle
 *   sfc get DEST REMOTE LOCAL      a download through the queue, with progress
 *   sfc cancel DEST REMOTE LOCAL   a download cancelled from its progress callback (which first
 *                                  tries a second transfer with the running one's cookie)
 *   sfc pair D1 R1 L1 D2 R2 L2     two recursive downloads at once, from two threads; prints the
 *                                  most files that were moving at the same time */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <termhost/termhost.h>

static const termhost_host_t *H;
static const termhost_sftp_files_t *F;

static void print(void *user, const void *data, size_t size) {
   dprintf(*(int *)user, "%.*s\n", (int)size, (const char *)data);
}

static unsigned long progress_calls;
static uint64_t last_bytes, last_total;
static int stopped;

static void progress(void *user, const char *path, uint64_t bytes, uint64_t total) {
   termhost_error_t err;
   (void)path;
   progress_calls++;
   last_bytes = bytes;
   last_total = total;
   if (user && !stopped && bytes > 100000) {
      /* A second transfer named like the running one is refused before it starts. */
      termhost_sftp_transfer_t again;
      termhost_status rc;
      memset(&again, 0, sizeof again);
      again.struct_size = sizeof again;
      again.destination = "nowhere";
      again.remote_path = again.local_path = "x";
      again.cookie = 7;
      rc = F->transfer(H, 0, &again, NULL, NULL, NULL, NULL, &err);
      dprintf(*(int *)user, "same cookie: %d %s\n", (int)rc, err.message);
      stopped = 1;
      dprintf(*(int *)user, "stop: %d\n", (int)F->stop(H, 7, 0, &err));
   }
}

static int32_t browse(int out, termhost_scene_id scene, const char *dest, const char *dir) {
   termhost_sftp_session_t *s = NULL;
   termhost_error_t err;
   char a[4096], b[4096];
   termhost_sftp_transfer_t t;
   memset(&t, 0, sizeof t);
   t.struct_size = sizeof t;
   t.destination = dest;
   t.remote_path = dir;
   t.local_path = dir;
   dprintf(out, "null caller open: %d %s\n", (int)F->open(NULL, scene, dest, &s, &err), err.message);
   dprintf(out, "null caller transfer: %d %s\n", (int)F->transfer(NULL, scene, &t, NULL, NULL, NULL, NULL, &err), err.message);
   dprintf(out, "null caller stop: %d %s\n", (int)F->stop(NULL, 7, 0, &err), err.message);
   if (F->open(H, scene, dest, &s, &err) != TERMHOST_OK) {
      dprintf(out, "open failed: %s\n", err.message);
      return 1;
   }
   snprintf(a, sizeof a, "%s/new", dir);
   snprintf(b, sizeof b, "%s/renamed", dir);
   dprintf(out, "mkdir: %d\n", (int)F->make_directory(s, a, &err));
   dprintf(out, "rename: %d\n", (int)F->rename(s, a, b, &err));
   dprintf(out, "list: %d\n", (int)F->list(s, dir, print, &out, &err));
   dprintf(out, "stat: %d\n", (int)F->stat(s, b, 1, print, &out, &err));
   snprintf(a, sizeof a, "%s/file.txt", dir);
   dprintf(out, "read: %d\n", (int)F->read(s, a, 2, 5, print, &out, &err));
   dprintf(out, "rmdir: %d\n", (int)F->remove_directory(s, b, &err));
   dprintf(out, "rm: %d\n", (int)F->remove_file(s, a, &err));
   dprintf(out, "rm again: %d %s\n", (int)F->remove_file(s, a, &err), err.message);
   F->close(s);
   dprintf(out, "stale: %d %s\n", (int)F->list(s, dir, print, &out, &err), err.message);
   return 0;
}

static int32_t get(int out, termhost_scene_id scene, const char *dest, const char *remote, const char *local, int cancel) {
   termhost_sftp_transfer_t t;
   termhost_error_t err;
   termhost_status rc;
   memset(&t, 0, sizeof t);
   t.struct_size = sizeof t;
   t.upload = 0;
   t.destination = dest;
   t.remote_path = remote;
   t.local_path = local;
   t.conflict = TERMHOST_SFTP_CONFLICT_FAIL;
   t.cookie = 7;
   rc = F->transfer(H, scene, &t, progress, cancel ? &out : NULL, print, &out, &err);
   dprintf(out, "transfer: %d %s\n", (int)rc, rc == TERMHOST_OK ? "" : err.message);
   dprintf(out, "progress: %s, last %llu of %llu\n", progress_calls > 0 ? "called" : "never",
           (unsigned long long)last_bytes, (unsigned long long)last_total);
   dprintf(out, "stop after: %d\n", (int)F->stop(H, 7, 0, &err));
   return rc == TERMHOST_OK ? 0 : 1;
}

/* Files moving at once, across both transfers of `pair`: a file starts moving at its first
 * progress call and stops at the one that reaches its total. */
static pthread_mutex_t moving_lock = PTHREAD_MUTEX_INITIALIZER;
static int moving, peak;
static char started[64][256];
static int started_count;

static void count_moving(void *user, const char *path, uint64_t bytes, uint64_t total) {
   int i, known = 0;
   (void)user;
   pthread_mutex_lock(&moving_lock);
   for (i = 0; i < started_count; i++) if (strcmp(started[i], path) == 0) known = 1;
   if (!known && started_count < 64) {
      snprintf(started[started_count++], sizeof started[0], "%s", path);
      if (++moving > peak) peak = moving;
   }
   if (bytes == total) moving--;
   pthread_mutex_unlock(&moving_lock);
}

typedef struct { termhost_scene_id scene; const char *dest, *remote, *local; termhost_status rc; } pair_job;

static void *pair_worker(void *arg) {
   pair_job *j = arg;
   termhost_sftp_transfer_t t;
   termhost_error_t err;
   memset(&t, 0, sizeof t);
   t.struct_size = sizeof t;
   t.destination = j->dest;
   t.remote_path = j->remote;
   t.local_path = j->local;
   t.flags = TERMHOST_SFTP_RECURSIVE;
   t.bytes_per_second = 4u << 20;   /* slow enough for the files of both transfers to overlap */
   j->rc = F->transfer(H, j->scene, &t, count_moving, NULL, NULL, NULL, &err);
   return NULL;
}

static int32_t pair(int out, termhost_scene_id scene, char *const *argv) {
   pair_job jobs[2] = { { scene, argv[1], argv[2], argv[3], -1 }, { scene, argv[4], argv[5], argv[6], -1 } };
   pthread_t threads[2];
   int i;
   for (i = 0; i < 2; i++) pthread_create(&threads[i], NULL, pair_worker, &jobs[i]);
   for (i = 0; i < 2; i++) pthread_join(threads[i], NULL);
   dprintf(out, "transfers: %d %d\npeak: %d\n", (int)jobs[0].rc, (int)jobs[1].rc, peak);
   return jobs[0].rc == TERMHOST_OK && jobs[1].rc == TERMHOST_OK ? 0 : 1;
}

static int32_t run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   (void)f;
   F = H->get_service(H, TERMHOST_SFTP_FILES);
   if (!F) return 1;
   if (inv->argc == 3 && strcmp(inv->argv[0], "browse") == 0) return browse(inv->stdout_fd, inv->scene, inv->argv[1], inv->argv[2]);
   if (inv->argc == 4 && strcmp(inv->argv[0], "get") == 0) return get(inv->stdout_fd, inv->scene, inv->argv[1], inv->argv[2], inv->argv[3], 0);
   if (inv->argc == 4 && strcmp(inv->argv[0], "cancel") == 0) return get(inv->stdout_fd, inv->scene, inv->argv[1], inv->argv[2], inv->argv[3], 1);
   if (inv->argc == 7 && strcmp(inv->argv[0], "pair") == 0) return pair(inv->stdout_fd, inv->scene, (char *const *)inv->argv);
   return 2;
}

static const char *const required[] = { TERMHOST_SFTP_FILES, NULL };
static const termhost_command_descriptor_t cmd = { sizeof(termhost_command_descriptor_t), "sfc", "files service probe", NULL };
static const termhost_command_descriptor_t *const cmds[] = { &cmd, NULL };
static const termhost_feature_descriptor_t desc = {
   sizeof(termhost_feature_descriptor_t), "org.test.sftpclient", "1.0.0", "Files probe", NULL, 1000,
   TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, required, NULL, cmds, NULL, NULL, 0 /* concurrent_commands */
};
static const termhost_feature_t inst = { sizeof(termhost_feature_t), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, run };
static uint32_t count(const termhost_feature_factory_t *x) { (void)x; return 1; }
static const termhost_feature_descriptor_t *getd(const termhost_feature_factory_t *x, uint32_t i) { (void)x; return i ? NULL : &desc; }
static termhost_feature_t *create(const termhost_feature_factory_t *x, const char *id, const termhost_scene_info_t *s, termhost_error_t *e) {
   (void)x; (void)id; (void)s; (void)e;
   return (termhost_feature_t *)&inst;
}
static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), count, getd, create };
static bool init(const termhost_host_t *host, termhost_error_t *err) { (void)err; H = host; return true; }
static void deinit(void) { H = NULL; }
static const void *get_factory(const char *id) { return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) ? NULL : &factory; }
static const termhost_plugin_entry_t entry = { TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), "org.test.sftpclient", "1.0.0", init, deinit, get_factory };
TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
