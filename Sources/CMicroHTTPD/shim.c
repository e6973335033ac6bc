#include "shelf_http.h"
