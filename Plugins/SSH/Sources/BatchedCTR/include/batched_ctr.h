/* AES-CTR for libssh2 1.10 with the keystream made in bulk.
 *
 * Why: libssh2 1.10 encrypts and decrypts one 16-byte block per EVP_Cipher call. OpenSSL's
 * CTR path costs about 18 ns per such call on this project's machine, against 0.1 ns per byte
 * in bulk, so a third of the client's CPU on a bulk transfer went to those calls.
 *
 * How: a small OpenSSL 3 provider, "termhost", registered into the process's default library
 * context, offers AES-128/192/256-CTR. Each context enciphers 256 counter blocks at a time
 * with the default provider's AES-ECB and XORs data with that keystream: the same bytes as
 * OpenSSL's CTR, made in bulk. Its state is OpenSSL's (running IV, num, re-keying without a
 * new IV), so every other user of AES-CTR in the process, OpenSSL's own CTR-DRBG included,
 * gets exactly what it got before. The default property query "?provider=termhost" makes
 * OpenSSL prefer these three ciphers; every other algorithm still comes from the default
 * provider. libssh2 picks them up through OpenSSL's ordinary implicit fetch: nothing of
 * libssh2 is patched or interposed.
 *
 * Threading: call once, before any SSH session exists (the SSH plugin's init). */
#ifndef TERMHOST_BATCHED_CTR_H
#define TERMHOST_BATCHED_CTR_H

#include <stddef.h>

/* Registers and prefers the provider. Returns 1 when enabled; 0 when left off, with the
 * reason in why (NUL-terminated, at most size bytes): FIPS mode, no default provider, or an
 * OpenSSL call that failed. Left off, OpenSSL's own AES-CTR is used as before. */
int termhost_batched_ctr_enable(char *why, size_t size);

#endif
