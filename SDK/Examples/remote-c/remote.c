/* remote-c: a C plugin that runs commands on remote hosts through the SSH plugin's transport
 * service ("org.termhost.ssh.transport/1"). It never touches libssh2, host keys or passwords:
 * the SSH plugin connects, verifies and authenticates, prompting on the invoking scene.
 *
 *   termhost remote-run HOST COMMAND...   prints the command's stdout and stderr, labelled,
 *                                         and returns its exit status
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <termhost/termhost.h>

#define FEATURE_ID "org.termhost.examples.remote-c"

static const termhost_host_t *g_host;

static void to_fd(void *user, const void *data, size_t size) {
   const int *fd = user;
   (void)!write(*fd, data, size);
}

struct streams { int out, err; };

static void on_stdout(void *user, const void *data, size_t size) { to_fd(&((struct streams *)user)->out, data, size); }
static void on_stderr(void *user, const void *data, size_t size) { to_fd(&((struct streams *)user)->err, data, size); }

static int32_t run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   const termhost_ssh_transport_t *ssh = g_host->get_service(g_host, TERMHOST_SSH_TRANSPORT);
   termhost_ssh_connection_t *connection = NULL;
   termhost_error_t err;
   struct streams streams;
   char command[4096] = "";
   int32_t status = 0;
   int i;
   (void)f;
   if (inv->argc < 2) {
      dprintf(inv->stderr_fd, "usage: termhost remote-run HOST COMMAND...\n");
      return 2;
   }
   if (!ssh) {
      dprintf(inv->stderr_fd, "termhost remote-run: the SSH transport service is not available\n");
      return 1;
   }
   for (i = 1; i < inv->argc; i++) {
      if (i > 1) strncat(command, " ", sizeof command - strlen(command) - 1);
      strncat(command, inv->argv[i], sizeof command - strlen(command) - 1);
   }
   if (ssh->open(g_host, inv->scene, inv->argv[0], &connection, &err) != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "%s\n", err.message);
      return 255;
   }
   streams.out = inv->stdout_fd;
   streams.err = inv->stderr_fd;
   if (ssh->exec(connection, command, NULL, 0, on_stdout, on_stderr, &streams, &status, &err) != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "termhost remote-run: %s\n", err.message);
      status = 255;
   }
   ssh->close(connection);
   return status;
}

static const char *const required[] = { TERMHOST_SSH_TRANSPORT, NULL };
static const termhost_command_descriptor_t cmd = {
   sizeof(termhost_command_descriptor_t), "remote-run", "Run a command on a host through the SSH service",
   "usage: termhost remote-run HOST COMMAND..."
};
static const termhost_command_descriptor_t *const cmds[] = { &cmd, NULL };
static const termhost_feature_descriptor_t descriptor = {
   .struct_size = sizeof(termhost_feature_descriptor_t), .id = FEATURE_ID, .version = "1.0.0",
   .display_name = "Remote run (C)", .description = "Runs remote commands through org.termhost.ssh.transport/1.",
   .order = 1000, .scope = TERMHOST_SCOPE_PROCESS, .requires_services = required, .commands = cmds
};
static const termhost_feature_t instance = {
   sizeof(termhost_feature_t), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, run
};

static uint32_t count(const termhost_feature_factory_t *x) { (void)x; return 1; }
static const termhost_feature_descriptor_t *get(const termhost_feature_factory_t *x, uint32_t i) {
   (void)x;
   return i == 0 ? &descriptor : NULL;
}
static termhost_feature_t *create(const termhost_feature_factory_t *x, const char *id,
                                  const termhost_scene_info_t *s, termhost_error_t *e) {
   (void)x; (void)id; (void)s; (void)e;
   return (termhost_feature_t *)&instance;
}
static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), count, get, create };

static bool init(const termhost_host_t *host, termhost_error_t *err) { (void)err; g_host = host; return true; }
static void deinit(void) { g_host = NULL; }
static const void *get_factory(const char *id) { return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL; }

static const termhost_plugin_entry_t entry = {
   TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), FEATURE_ID, "1.0.0", init, deinit, get_factory
};

TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
