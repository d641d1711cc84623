#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/provider.h>
/* d2i_PUBKEY: SSH public keys are handed to libcrypto as SubjectPublicKeyInfo (plugin set signatures). */
#include <openssl/x509.h>
