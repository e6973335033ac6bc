// Only SHA-256 is used: artwork rows are content-addressed by it.
#include <openssl/sha.h>
