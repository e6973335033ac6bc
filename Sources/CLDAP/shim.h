// OpenLDAP's client library (libldap-dev) without its deprecated synchronous calls.
#define LDAP_DEPRECATED 0
#include <ldap.h>
