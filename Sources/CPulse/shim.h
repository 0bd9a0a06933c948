#include <pulse/simple.h>
#include <pulse/error.h>
