/* termhost/services/interact.h: asking the user something through a scene's terminal.
 *
 * Fail closed: a scene without a terminal, scene 0 (background work), or a host started with
 * --non-interactive returns TERMHOST_ERR_NON_INTERACTIVE and never a default answer. Answers
 * typed for secret prompts are never logged or stored by the host. */
#ifndef TERMHOST_SERVICE_INTERACT_H
#define TERMHOST_SERVICE_INTERACT_H

#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../host.h"
#include "../feature.h"

#define TERMHOST_SERVICE_INTERACT "termhost.interact/1"

typedef struct termhost_host_interact { /* implemented by the host */
   uint32_t struct_size;

   /* Shows prompt and reads one line into buf (NUL-terminated, newline removed). echo = 0 turns
    * terminal echo off (passwords, passphrases). prompt: borrowed. buf: caller-owned.
    * TERMHOST_ERR_CANCELLED on end of input or ^C; TERMHOST_ERR_TOO_LARGE when the line does
    * not fit. Blocks until answered. [any-thread, one prompt per scene at a time] */
   termhost_status (*prompt_text)(const termhost_host_t *host, termhost_scene_id scene,
                                  const char *prompt, int32_t echo, char *buf, size_t buf_size,
                                  termhost_error_t *err);

   /* Asks a yes/no question; *answer gets 1 for yes, 0 for no. Only "yes"/"y" and "no"/"n"
    * are accepted; anything else asks again. [any-thread, one prompt per scene at a time] */
   termhost_status (*confirm)(const termhost_host_t *host, termhost_scene_id scene,
                              const char *question, int32_t *answer, termhost_error_t *err);

   /* Shows numbered choices and writes the chosen index (0-based) into *chosen.
    * choices: count borrowed strings. [any-thread, one prompt per scene at a time] */
   termhost_status (*choose)(const termhost_host_t *host, termhost_scene_id scene,
                             const char *prompt, const char *const *choices, uint32_t count,
                             uint32_t *chosen, termhost_error_t *err);

   /* Prints a notice on the scene's terminal (stderr). Works without a terminal too: it then
    * goes to the log. [any-thread] */
   void (*notify)(const termhost_host_t *host, termhost_scene_id scene, const char *message);

   /* ---- Added in ABI 1.1: check TERMHOST_HAS_FIELD(interact, termhost_host_interact_t,
    *      can_prompt) before calling (a 1.0 host lacks it). ---- */

   /* Added in ABI 1.1. 1 when a prompt on `scene` can be shown now (the scene has a terminal and the host is not
    * --non-interactive), else 0. Lets a caller skip a method that would otherwise answer a
    * server with empty responses (keyboard-interactive), rather than fail it. [any-thread] */
   int32_t (*can_prompt)(const termhost_host_t *host, termhost_scene_id scene);
} termhost_host_interact_t;

#endif
