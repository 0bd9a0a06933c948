#define _GNU_SOURCE
#include "CNetShim.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

enum { MAJLIS_BATCH_MAX = 256 };

int majlis_send_batch(int fd, const unsigned char *buffers, int stride, const int *lengths,
                      const struct sockaddr_in *addresses, int count) {
    struct mmsghdr messages[MAJLIS_BATCH_MAX];
    struct iovec vectors[MAJLIS_BATCH_MAX];
    int total = 0;
    while (total < count) {
        int chunk = count - total < MAJLIS_BATCH_MAX ? count - total : MAJLIS_BATCH_MAX;
        memset(messages, 0, sizeof(struct mmsghdr) * (size_t)chunk);
        for (int i = 0; i < chunk; i++) {
            int index = total + i;
            vectors[i].iov_base = (void *)(buffers + (size_t)index * (size_t)stride);
            vectors[i].iov_len = (size_t)lengths[index];
            messages[i].msg_hdr.msg_iov = &vectors[i];
            messages[i].msg_hdr.msg_iovlen = 1;
            messages[i].msg_hdr.msg_name = (void *)&addresses[index];
            messages[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
        }
        int sent = sendmmsg(fd, messages, (unsigned int)chunk, 0);
        if (sent <= 0) return total > 0 ? total : sent;
        total += sent;
    }
    return total;
}

int majlis_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

int majlis_set_thread_realtime(int priority) {
    struct sched_param parameters = {.sched_priority = priority};
    return pthread_setschedparam(pthread_self(), priority > 0 ? SCHED_FIFO : SCHED_OTHER, &parameters);
}

int majlis_set_thread_idle(int tid, int idle) {
    struct sched_param parameters = {.sched_priority = 0};
    return sched_setscheduler(tid, idle ? SCHED_IDLE : SCHED_OTHER, &parameters) == 0 ? 0 : errno;
}

int majlis_pin_thread(int tid, int core) {
    cpu_set_t cores;
    CPU_ZERO(&cores);
    if (core < 0) {
        for (int index = 0; index < CPU_SETSIZE; index++) CPU_SET(index, &cores);
    } else {
        CPU_SET(core, &cores);
    }
    return sched_setaffinity(tid, sizeof(cores), &cores) == 0 ? 0 : errno;
}
