// SHA-256 content-addresses artwork rows and hashes audio identities, API keys and session tokens;
// AES-256-GCM (EVP) encrypts stored passwords; RAND_bytes makes keys, nonces and tokens;
// CRYPTO_memcmp compares secrets in constant time.
#include <openssl/sha.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
