#ifndef MAJLIS_NET_SHIM_H
#define MAJLIS_NET_SHIM_H

#include <netinet/in.h>

/// Sends `count` UDP datagrams with sendmmsg(2): datagram i is `lengths[i]` bytes at
/// `buffers + i * stride`, to `addresses[i]`. Returns how many were sent (or -1).
int majlis_send_batch(int fd, const unsigned char *buffers, int stride, const int *lengths,
                      const struct sockaddr_in *addresses, int count);

#endif
