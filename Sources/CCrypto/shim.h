// Only SHA-256 is used: artwork rows are content-addressed by it, audio identities hashed with it.
#include <openssl/sha.h>
#include <openssl/evp.h>
