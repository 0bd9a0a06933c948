#if defined(__linux__)
#include <malloc.h>
#endif
