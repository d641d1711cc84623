/*
 * delay-proxy: a TCP relay on loopback that holds every byte for a one-way delay in each
 * direction, with an optional rate cap: a long path (20-150 ms) on a machine whose kernel has
 * no netem (netem needs CAP_NET_ADMIN). Benchmarks/wan.sh runs SSH, SFTP and forwarding
 * through it, and raw TCP as the path's ceiling.
 *
 *   delay-proxy --target PORT --delay MS [--rate MBIT] [--queue MIB]
 *
 * Binds 127.0.0.1 on a port the kernel picks and prints it on stdout, then relays every
 * accepted connection to 127.0.0.1:PORT until killed.
 *
 * How the delay is kept honest (the pitfalls of a user-space delay):
 * - Each read (up to 256 KiB) is stamped with its arrival time and released at arrival +
 *   delay, never "sleep per read", which would serialise the stream and stack the delays.
 * - A direction holds at most --queue MiB (default 32, the kernel's tcp_rmem maximum here: a
 *   real TCP flow cannot have more in flight); beyond that it stops reading, so the sender's
 *   own flow control (its SSH window, its TCP buffers) is what limits it, as on a real path.
 *   Loopback TCP is acknowledged at once, so the cap covers the one-way delay only: raw TCP
 *   through the proxy behaves as if its window were about twice that, a generous ceiling.
 * - --rate caps each direction with a token bucket (MBIT megabits per second), since
 *   loopback has no bottleneck of its own.
 * One thread, poll(2), non-blocking sockets.
 */
#define _GNU_SOURCE   /* ppoll */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (256 * 1024)
#define MAX_PAIRS 64

struct chunk {
    struct chunk *next;
    int64_t release_ns;
    size_t length, sent;
    unsigned char data[];
};

/* One direction of one connection: bytes read from `from`, queued, written to `to`. */
struct direction {
    int from, to;
    struct chunk *head, *tail;
    size_t queued;
    int read_closed;     /* EOF seen: `to` is shut down for writing once the queue drains */
    double tokens;       /* bytes the rate cap allows now */
    int64_t refilled_ns;
};

struct pair { int used; struct direction way[2]; };

static int64_t delay_ns;
static double rate_bytes_per_ns;   /* 0: no cap */
static size_t queue_cap;
static struct pair pairs[MAX_PAIRS];

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void nonblocking(int fd) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void drop(struct pair *p) {
    close(p->way[0].from);
    close(p->way[0].to);
    for (int w = 0; w < 2; w++) {
        struct chunk *c = p->way[w].head;
        while (c) { struct chunk *n = c->next; free(c); c = n; }
    }
    memset(p, 0, sizeof *p);
}

static void refill(struct direction *d, int64_t now) {
    if (rate_bytes_per_ns <= 0) return;
    d->tokens += (double)(now - d->refilled_ns) * rate_bytes_per_ns;
    /* A burst of at most one chunk, as a bottleneck link's queue would pass. */
    if (d->tokens > CHUNK) d->tokens = CHUNK;
    d->refilled_ns = now;
}

/* Reads what the queue has room for; 0 when the connection must end. */
static int take(struct direction *d, int64_t now) {
    if (d->read_closed || d->queued >= queue_cap) return 1;
    struct chunk *c = malloc(sizeof *c + CHUNK);
    if (!c) return 0;
    ssize_t n = read(d->from, c->data, CHUNK);
    if (n < 0) { free(c); return errno == EAGAIN || errno == EINTR; }
    if (n == 0) { free(c); d->read_closed = 1; return 1; }
    c->next = NULL;
    c->release_ns = now + delay_ns;
    c->length = (size_t)n;
    c->sent = 0;
    if (d->tail) d->tail->next = c; else d->head = c;
    d->tail = c;
    d->queued += (size_t)n;
    return 1;
}

/* Writes what is due and allowed; 0 when the connection must end. */
static int give(struct direction *d, int64_t now) {
    refill(d, now);
    while (d->head && d->head->release_ns <= now) {
        struct chunk *c = d->head;
        size_t want = c->length - c->sent;
        if (rate_bytes_per_ns > 0) {
            if (d->tokens < 1) return 1;
            if ((double)want > d->tokens) want = (size_t)d->tokens;
        }
        ssize_t n = write(d->to, c->data + c->sent, want);
        if (n < 0) return errno == EAGAIN || errno == EINTR;
        c->sent += (size_t)n;
        d->queued -= (size_t)n;
        if (rate_bytes_per_ns > 0) d->tokens -= (double)n;
        if (c->sent < c->length) return 1;
        d->head = c->next;
        if (!d->head) d->tail = NULL;
        free(c);
    }
    if (!d->head && d->read_closed) shutdown(d->to, SHUT_WR);
    return 1;
}

static int connect_target(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

int main(int argc, char **argv) {
    int target = 0;
    double delay_ms = -1, rate_mbit = 0, queue_mib = 32;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--target")) target = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--delay")) delay_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate")) rate_mbit = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--queue")) queue_mib = atof(argv[i + 1]);
        else { fprintf(stderr, "delay-proxy: unknown option %s\n", argv[i]); return 2; }
    }
    if (target <= 0 || target > 65535 || delay_ms < 0 || delay_ms > 10000 || rate_mbit < 0 || queue_mib < 1) {
        fprintf(stderr, "usage: delay-proxy --target PORT --delay MS [--rate MBIT] [--queue MIB]\n");
        return 2;
    }
    delay_ns = (int64_t)(delay_ms * 1e6);
    rate_bytes_per_ns = rate_mbit * 1e6 / 8 / 1e9;
    queue_cap = (size_t)(queue_mib * 1024 * 1024);
    signal(SIGPIPE, SIG_IGN);

    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(listener, 16) != 0 ||
        getsockname(listener, (struct sockaddr *)&a, &len) != 0) {
        perror("delay-proxy: listen");
        return 1;
    }
    printf("%d\n", ntohs(a.sin_port));
    fflush(stdout);

    for (;;) {
        /* Each pair polls at most 4 descriptors (both ends reading and writing). */
        struct pollfd fds[1 + MAX_PAIRS * 4];
        int owner[1 + MAX_PAIRS * 4];
        int n = 0;
        int64_t now = now_ns(), wake = -1;
        fds[n] = (struct pollfd){ .fd = listener, .events = POLLIN };
        owner[n++] = -1;
        for (int i = 0; i < MAX_PAIRS; i++) {
            if (!pairs[i].used) continue;
            for (int w = 0; w < 2; w++) {
                struct direction *d = &pairs[i].way[w];
                short events = 0;
                if (!d->read_closed && d->queued < queue_cap) events |= POLLIN;
                if (d->head) {
                    int64_t due = d->head->release_ns;
                    if (rate_bytes_per_ns > 0 && d->tokens < 1) {
                        int64_t refill_at = now + (int64_t)((1 - d->tokens) / rate_bytes_per_ns) + 1;
                        if (refill_at > due) due = refill_at;
                    }
                    if (due <= now) events |= POLLOUT;
                    else if (wake < 0 || due < wake) wake = due;
                }
                /* The write side is polled on the other socket of the pair. A descriptor with no
                   events is left out (fd -1): poll would still report its hang-up, and spin. */
                fds[n] = (struct pollfd){ .fd = (events & POLLIN) ? d->from : -1, .events = POLLIN };
                owner[n++] = i * 2 + w;
                if (events & POLLOUT) {
                    fds[n] = (struct pollfd){ .fd = d->to, .events = POLLOUT };
                    owner[n++] = -2 - (i * 2 + w);
                }
            }
        }
        /* ppoll, to the nanosecond: poll's whole milliseconds would release each chunk up to 1 ms
           late in each direction, 10% of a 20 ms round trip. */
        struct timespec wait_for = { 0, 0 };
        if (wake >= 0) { wait_for.tv_sec = (wake - now) / 1000000000; wait_for.tv_nsec = (wake - now) % 1000000000; }
        if (ppoll(fds, (nfds_t)n, wake < 0 ? NULL : &wait_for, NULL) < 0 && errno != EINTR) { perror("delay-proxy: ppoll"); return 1; }
        now = now_ns();
        if (fds[0].revents & POLLIN) {
            int client = accept(listener, NULL, NULL);
            int server = client >= 0 ? connect_target(target) : -1;
            int slot = -1;
            for (int i = 0; i < MAX_PAIRS && slot < 0; i++) if (!pairs[i].used) slot = i;
            if (client >= 0 && (server < 0 || slot < 0)) {
                close(client);
                if (server >= 0) close(server);
            } else if (client >= 0) {
                nonblocking(client);
                nonblocking(server);
                pairs[slot].used = 1;
                pairs[slot].way[0] = (struct direction){ .from = client, .to = server, .refilled_ns = now };
                pairs[slot].way[1] = (struct direction){ .from = server, .to = client, .refilled_ns = now };
            }
        }
        for (int k = 1; k < n; k++) {
            if (!fds[k].revents) continue;
            int id = owner[k] >= 0 ? owner[k] : -2 - owner[k];
            struct pair *p = &pairs[id / 2];
            if (!p->used) continue;
            struct direction *d = &p->way[id % 2];
            if (!(owner[k] >= 0 ? take(d, now) : give(d, now))) drop(p);
        }
        /* What came due while polling, and the ends: both directions read to EOF and drained. */
        for (int i = 0; i < MAX_PAIRS; i++) {
            if (!pairs[i].used) continue;
            for (int w = 0; w < 2 && pairs[i].used; w++) {
                if (!give(&pairs[i].way[w], now)) drop(&pairs[i]);
            }
            if (pairs[i].used && pairs[i].way[0].read_closed && pairs[i].way[1].read_closed &&
                !pairs[i].way[0].head && !pairs[i].way[1].head) drop(&pairs[i]);
        }
    }
}
