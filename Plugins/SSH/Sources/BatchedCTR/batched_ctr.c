/* See include/batched_ctr.h for why this exists. The provider follows OpenSSL 3's provider
 * API (provider-cipher(7)): one algorithm table, one dispatch table per key length. */
#include "batched_ctr.h"

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 256                /* counter blocks enciphered per call of the real cipher */
#define KEYSTREAM (BLOCKS * 16)   /* 4 KiB */
#define IV_LENGTH 16

/* The library context the SSH sessions' ciphers come from: OpenSSL's default provider, this
 * one, and a default property query that prefers this one. Made once, kept for the process. */
static OSSL_LIB_CTX *ssh_context;

typedef unsigned char block16 __attribute__((vector_size(16)));   /* GCC and Clang */

/* The state follows OpenSSL's own CTR exactly, so that every user of AES-CTR in the process
 * (OpenSSL's CTR-DRBG reads the running IV back, and re-keys without a new IV) sees the same
 * behaviour: `iv` is the counter of the next block to encipher, `partial` the keystream of the
 * current block and `num` how much of it is used. While the bulk keystream is valid, those
 * three are derived from it instead: block i of `keystream` is E(first + i), `pos` bytes of it
 * are used. */
typedef struct {
   EVP_CIPHER_CTX *ecb;                 /* the default provider's AES-ECB, no padding */
   size_t key_length;
   unsigned char original_iv[IV_LENGTH];
   unsigned char iv[IV_LENGTH];         /* used while !valid */
   unsigned char partial[16];           /* used while !valid and num != 0 */
   unsigned int num;                    /* used while !valid */
   int valid;                           /* keystream, first and pos describe the state */
   unsigned char first[IV_LENGTH];
   size_t pos;
   unsigned char counters[KEYSTREAM];
   unsigned char keystream[KEYSTREAM];
} batch;

static const char *ecb_name(size_t key_length) {
   return key_length == 16 ? "AES-128-ECB" : key_length == 24 ? "AES-192-ECB" : "AES-256-ECB";
}

/* counter += n, big-endian over all 128 bits (OpenSSL's CTR carries across the whole block). */
static void add(unsigned char counter[16], size_t n) {
   int i;
   for (i = 15; i >= 0 && n; i--) {
      size_t sum = counter[i] + (n & 0xff);
      counter[i] = (unsigned char)sum;
      n = (n >> 8) + (sum >> 8);
   }
}

static void *new_context(size_t key_length) {
   batch *b = OPENSSL_zalloc(sizeof *b);
   EVP_CIPHER *ecb;
   if (!b) return NULL;
   b->key_length = key_length;
   /* Explicitly the default provider's: the block cipher itself, never this provider. */
   ecb = EVP_CIPHER_fetch(ssh_context, ecb_name(key_length), "provider=default");
   b->ecb = EVP_CIPHER_CTX_new();
   if (!ecb || !b->ecb || !EVP_EncryptInit_ex(b->ecb, ecb, NULL, NULL, NULL) || !EVP_CIPHER_CTX_set_padding(b->ecb, 0)) {
      EVP_CIPHER_free(ecb);
      EVP_CIPHER_CTX_free(b->ecb);
      OPENSSL_free(b);
      return NULL;
   }
   EVP_CIPHER_free(ecb);   /* the context holds its own reference */
   return b;
}

static void *new128(void *provider) { (void)provider; return new_context(16); }
static void *new192(void *provider) { (void)provider; return new_context(24); }
static void *new256(void *provider) { (void)provider; return new_context(32); }

static void free_context(void *vb) {
   batch *b = vb;
   if (!b) return;
   EVP_CIPHER_CTX_free(b->ecb);
   OPENSSL_clear_free(b, sizeof *b);   /* keystream is as secret as the key */
}

static void *dup_context(void *vb) {
   batch *b = vb, *copy = OPENSSL_malloc(sizeof *b);
   if (!copy) return NULL;
   memcpy(copy, b, sizeof *b);
   copy->ecb = EVP_CIPHER_CTX_new();
   if (!copy->ecb || !EVP_CIPHER_CTX_copy(copy->ecb, b->ecb)) {
      EVP_CIPHER_CTX_free(copy->ecb);
      OPENSSL_clear_free(copy, sizeof *copy);
      return NULL;
   }
   return copy;
}

/* Back from the bulk keystream to OpenSSL's three fields; the keystream is wiped. */
static void settle(batch *b) {
   if (!b->valid) return;
   b->num = (unsigned int)(b->pos % 16);
   memcpy(b->iv, b->first, 16);
   add(b->iv, (b->pos + 15) / 16);   /* a block partly used is already counted */
   if (b->num) memcpy(b->partial, b->keystream + b->pos - b->num, 16);
   b->valid = 0;
   OPENSSL_cleanse(b->keystream, sizeof b->keystream);
}

/* As OpenSSL's CTR: every init drops what is left of the current block (num = 0); a new IV
 * sets the counter, a new key alone keeps it running. */
static int init(void *vb, const unsigned char *key, size_t key_length, const unsigned char *iv, size_t iv_length,
                const OSSL_PARAM params[]) {
   batch *b = vb;
   (void)params;
   if (key && key_length != b->key_length) return 0;
   if (iv && iv_length != IV_LENGTH) return 0;
   settle(b);
   b->num = 0;
   if (iv) {
      memcpy(b->original_iv, iv, IV_LENGTH);
      memcpy(b->iv, iv, IV_LENGTH);
   }
   if (key && !EVP_EncryptInit_ex(b->ecb, NULL, NULL, key, NULL)) return 0;
   return 1;
}

static uint64_t load_be64(const unsigned char *p) {
   uint64_t v = 0;
   int i;
   for (i = 0; i < 8; i++) v = v << 8 | p[i];
   return v;
}

static void store_be64(unsigned char *p, uint64_t v) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
   v = __builtin_bswap64(v);   /* one instruction and one store */
   memcpy(p, &v, 8);
#else
   int i;
   for (i = 7; i >= 0; i--) { p[i] = (unsigned char)v; v >>= 8; }
#endif
}

/* The next BLOCKS counter blocks from `first`, enciphered. The low 64 bits are counted
 * directly unless they would carry within the batch (then byte by byte, rarely). */
static int refill(batch *b) {
   int made = 0, i;
   uint64_t low = load_be64(b->first + 8);
   if (low <= UINT64_MAX - (BLOCKS - 1)) {
      for (i = 0; i < BLOCKS; i++) {
         memcpy(b->counters + 16 * i, b->first, 8);
         store_be64(b->counters + 16 * i + 8, low + (uint64_t)i);
      }
   } else {
      for (i = 0; i < BLOCKS; i++) {
         memcpy(b->counters + 16 * i, b->first, 16);
         add(b->counters + 16 * i, (size_t)i);
      }
   }
   if (!EVP_EncryptUpdate(b->ecb, b->keystream, &made, b->counters, KEYSTREAM) || made != KEYSTREAM) return 0;
   b->pos = 0;
   return 1;
}

static int crypt_bytes(void *vb, unsigned char *out, size_t *outl, size_t outsize, const unsigned char *in, size_t inl) {
   batch *b = vb;
   size_t done = 0;
   if (outsize < inl) return 0;
   /* libssh2's only call for AES-CTR (1.10 and 1.11.1 alike): one whole block, keystream at
    * hand. Everything below handles the rest; this path skips its bookkeeping, tens of
    * millions of times per GiB. */
   if (inl == 16 && b->valid && b->pos <= KEYSTREAM - 16) {
      block16 x, k;
      memcpy(&x, in, 16);
      memcpy(&k, b->keystream + b->pos, 16);
      x ^= k;
      memcpy(out, &x, 16);
      b->pos += 16;
      *outl = 16;
      return 1;
   }
   if (!b->valid) {
      /* Finish the current block from `partial`, then start the bulk keystream at `iv`. */
      while (b->num && done < inl) {
         out[done] = in[done] ^ b->partial[b->num];
         done++;
         b->num = (b->num + 1) % 16;
      }
      if (done == inl) { *outl = inl; return 1; }
      memcpy(b->first, b->iv, 16);
      if (!refill(b)) return 0;
      b->valid = 1;
   }
   while (done < inl) {
      size_t n, i;
      if (b->pos == KEYSTREAM) {
         add(b->first, BLOCKS);
         if (!refill(b)) return 0;
      }
      n = KEYSTREAM - b->pos;
      if (n > inl - done) n = inl - done;
      /* 16 bytes per load and store: libssh2 copies each block right after with one 16-byte
       * load, which two 8-byte stores would stall (store forwarding). memcpy keeps it
       * alignment-safe; the compiler makes each a single vector move. */
      for (i = 0; i + 16 <= n; i += 16) {
         block16 x, k;
         memcpy(&x, in + done + i, 16);
         memcpy(&k, b->keystream + b->pos + i, 16);
         x ^= k;
         memcpy(out + done + i, &x, 16);
      }
      for (; i < n; i++) out[done + i] = in[done + i] ^ b->keystream[b->pos + i];
      b->pos += n;
      done += n;
   }
   *outl = inl;
   return 1;
}

static int final(void *vb, unsigned char *out, size_t *outl, size_t outsize) {
   (void)vb; (void)out; (void)outsize;
   *outl = 0;
   return 1;
}

static int get_params(OSSL_PARAM params[], size_t key_length) {
   OSSL_PARAM *p;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_MODE)) && !OSSL_PARAM_set_uint(p, EVP_CIPH_CTR_MODE)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_KEYLEN)) && !OSSL_PARAM_set_size_t(p, key_length)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IVLEN)) && !OSSL_PARAM_set_size_t(p, IV_LENGTH)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_BLOCK_SIZE)) && !OSSL_PARAM_set_size_t(p, 1)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD)) && !OSSL_PARAM_set_int(p, 0)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_CUSTOM_IV)) && !OSSL_PARAM_set_int(p, 0)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_CTS)) && !OSSL_PARAM_set_int(p, 0)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK)) && !OSSL_PARAM_set_int(p, 0)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_HAS_RAND_KEY)) && !OSSL_PARAM_set_int(p, 0)) return 0;
   return 1;
}

static int params128(OSSL_PARAM params[]) { return get_params(params, 16); }
static int params192(OSSL_PARAM params[]) { return get_params(params, 24); }
static int params256(OSSL_PARAM params[]) { return get_params(params, 32); }

static const OSSL_PARAM gettable[] = {
   OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL),
   OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
   OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
   OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
   OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL),
   OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
   OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, NULL),
   OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, NULL),
   OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, NULL),
   OSSL_PARAM_END
};

static const OSSL_PARAM *gettable_params(void *provider) { (void)provider; return gettable; }

/* Per context, as OpenSSL's CTR: the lengths, the IV given, the running IV and num. */
static int get_context_params(void *vb, OSSL_PARAM params[]) {
   batch *b = vb;
   OSSL_PARAM *p;
   settle(b);
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_KEYLEN)) && !OSSL_PARAM_set_size_t(p, b->key_length)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IVLEN)) && !OSSL_PARAM_set_size_t(p, IV_LENGTH)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_NUM)) && !OSSL_PARAM_set_uint(p, b->num)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IV))
       && !OSSL_PARAM_set_octet_string(p, b->original_iv, IV_LENGTH) && !OSSL_PARAM_set_octet_ptr(p, b->original_iv, IV_LENGTH)) return 0;
   if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_UPDATED_IV))
       && !OSSL_PARAM_set_octet_string(p, b->iv, IV_LENGTH) && !OSSL_PARAM_set_octet_ptr(p, b->iv, IV_LENGTH)) return 0;
   return 1;
}

static const OSSL_PARAM context_gettable[] = {
   OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
   OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
   OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
   OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
   OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
   OSSL_PARAM_END
};

static const OSSL_PARAM *gettable_context_params(void *vb, void *provider) { (void)vb; (void)provider; return context_gettable; }

/* A key length equal to the algorithm's, num (0-15); padding means nothing to CTR. */
static int set_context_params(void *vb, const OSSL_PARAM params[]) {
   batch *b = vb;
   const OSSL_PARAM *p;
   size_t length;
   unsigned int num;
   if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_KEYLEN))
       && (!OSSL_PARAM_get_size_t(p, &length) || length != b->key_length)) return 0;
   if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_NUM))) {
      if (!OSSL_PARAM_get_uint(p, &num) || num > 15) return 0;
      settle(b);
      b->num = num;
   }
   return 1;
}

static const OSSL_PARAM context_settable[] = {
   OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
   OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
   OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
   OSSL_PARAM_END
};

static const OSSL_PARAM *settable_context_params(void *vb, void *provider) { (void)vb; (void)provider; return context_settable; }

#define FN(f) ((void (*)(void))(f))
#define CTR_FUNCTIONS(bits)                                                          \
   static const OSSL_DISPATCH ctr##bits[] = {                                        \
      { OSSL_FUNC_CIPHER_NEWCTX, FN(new##bits) },                                    \
      { OSSL_FUNC_CIPHER_FREECTX, FN(free_context) },                                \
      { OSSL_FUNC_CIPHER_DUPCTX, FN(dup_context) },                                  \
      { OSSL_FUNC_CIPHER_ENCRYPT_INIT, FN(init) },                                   \
      { OSSL_FUNC_CIPHER_DECRYPT_INIT, FN(init) },                                   \
      { OSSL_FUNC_CIPHER_UPDATE, FN(crypt_bytes) },                                  \
      { OSSL_FUNC_CIPHER_FINAL, FN(final) },                                         \
      { OSSL_FUNC_CIPHER_CIPHER, FN(crypt_bytes) },                                  \
      { OSSL_FUNC_CIPHER_GET_PARAMS, FN(params##bits) },                             \
      { OSSL_FUNC_CIPHER_GETTABLE_PARAMS, FN(gettable_params) },                     \
      { OSSL_FUNC_CIPHER_GET_CTX_PARAMS, FN(get_context_params) },                   \
      { OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, FN(gettable_context_params) },         \
      { OSSL_FUNC_CIPHER_SET_CTX_PARAMS, FN(set_context_params) },                   \
      { OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, FN(settable_context_params) },         \
      { 0, NULL }                                                                    \
   };
CTR_FUNCTIONS(128)
CTR_FUNCTIONS(192)
CTR_FUNCTIONS(256)

static const OSSL_ALGORITHM ciphers[] = {
   { "AES-128-CTR", "provider=termhost", ctr128, "AES-CTR, keystream made 256 blocks at a time" },
   { "AES-192-CTR", "provider=termhost", ctr192, "AES-CTR, keystream made 256 blocks at a time" },
   { "AES-256-CTR", "provider=termhost", ctr256, "AES-CTR, keystream made 256 blocks at a time" },
   { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *query(void *provider, int operation, int *no_cache) {
   (void)provider;
   *no_cache = 0;
   return operation == OSSL_OP_CIPHER ? ciphers : NULL;
}

static const OSSL_DISPATCH provider_functions[] = {
   { OSSL_FUNC_PROVIDER_QUERY_OPERATION, FN(query) },
   { 0, NULL }
};

static int provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
                         void **provider) {
   (void)in;
   *out = provider_functions;
   *provider = (void *)handle;
   return 1;
}

int termhost_batched_ctr_enable(char *why, size_t size) {
   OSSL_LIB_CTX *made;
   if (ssh_context) {
      if (size > 0) why[0] = 0;
      return 1;
   }
   /* FIPS mode wants FIPS-validated code only; ours is not. */
   if (EVP_default_properties_is_fips_enabled(NULL)) {
      snprintf(why, size, "OpenSSL runs in FIPS mode");
      return 0;
   }
   /* A configuration that leaves the default provider out of the process is respected. */
   if (!OSSL_PROVIDER_available(NULL, "default")) {
      snprintf(why, size, "OpenSSL's default provider is not available");
      return 0;
   }
   made = OSSL_LIB_CTX_new();
   if (!made || !OSSL_PROVIDER_load(made, "default")) {
      OSSL_LIB_CTX_free(made);
      snprintf(why, size, "OpenSSL could not make a library context with its default provider");
      return 0;
   }
   if (!OSSL_PROVIDER_add_builtin(made, "termhost", provider_init) || !OSSL_PROVIDER_load(made, "termhost")) {
      OSSL_LIB_CTX_free(made);
      snprintf(why, size, "OpenSSL refused to load the provider");
      return 0;
   }
   if (!EVP_set_default_properties(made, "?provider=termhost")) {
      OSSL_LIB_CTX_free(made);
      snprintf(why, size, "OpenSSL refused the default property query");
      return 0;
   }
   ssh_context = made;
   if (size > 0) why[0] = 0;
   return 1;
}

void *termhost_batched_ctr_enter(void) {
   return ssh_context ? OSSL_LIB_CTX_set0_default(ssh_context) : NULL;
}

void termhost_batched_ctr_leave(void *previous) {
   if (previous) OSSL_LIB_CTX_set0_default(previous);
}
