#ifndef MAJLIS_NET_SHIM_H
#define MAJLIS_NET_SHIM_H

#include <netinet/in.h>

/// Sends `count` UDP datagrams with sendmmsg(2): datagram i is `lengths[i]` bytes at
/// `buffers + i * stride`, to `addresses[i]`. Returns how many were sent (or -1).
int majlis_send_batch(int fd, const unsigned char *buffers, int stride, const int *lengths,
                      const struct sockaddr_in *addresses, int count);

/// Names the calling thread (pthread_setname_np; at most 15 bytes). Returns 0 or an errno.
int majlis_set_thread_name(const char *name);

/// Schedules the calling thread first-in-first-out at real-time `priority` (1-99), or, with 0,
/// as an ordinary thread again. Returns 0 or an errno (EPERM where the process may not).
int majlis_set_thread_realtime(int priority);

/// Schedules thread `tid` of this process as idle (`idle` 1: it runs only when no other thread
/// wants the core) or as an ordinary thread again (0). Returns 0 or an errno.
int majlis_set_thread_idle(int tid, int idle);

/// Lets thread `tid` (of any process, where allowed) run on core `core` only (or on every core,
/// with -1).
/// Returns 0 or an errno.
int majlis_pin_thread(int tid, int core);

#endif
