#ifndef SHELF_HTTP_H
#define SHELF_HTTP_H
#endif
