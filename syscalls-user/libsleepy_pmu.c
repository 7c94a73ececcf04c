// SPDX-License-Identifier: GPL-2.0
/*
 * libsleepy_pmu: registration, the overflow signal handler and its ring.
 *
 * The ring follows the bounded-queue design with one sequence number per
 * slot: a producer claims a slot by advancing head with compare-and-swap,
 * fills it and publishes it by storing the slot's sequence; the consumer
 * takes a slot only once it is published. Nothing blocks, nothing
 * allocates, so the push is async-signal-safe; the ring's atomics are
 * lock-free on the targets we build for (checked at compile time).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "libsleepy.h"
#include "libsleepy_pmu.h"

_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2 && ATOMIC_LLONG_LOCK_FREE == 2,
	       "the ring needs lock-free atomics to be signal-safe");

/*
 * The kernel's siginfo for an overflow (x86_64): si_addr at offset 16, then
 * the si_perf_* union members, which glibc's siginfo_t does not name.
 */
struct pmu_siginfo {
	int32_t signo, errno_, code, pad;
	uint64_t addr;
	uint64_t data;		/* si_perf_data: counter value */
	uint32_t type;		/* si_perf_type: counter index */
	uint32_t flags;		/* si_perf_flags: CPU */
};

_Static_assert(sizeof(struct pmu_siginfo) <= sizeof(siginfo_t),
	       "siginfo_t is too small");
_Static_assert(offsetof(siginfo_t, si_addr) ==
	       offsetof(struct pmu_siginfo, addr), "si_addr moved");

static struct sleepy_pmu_ring *_Atomic handler_ring;

int sleepy_pmu_open(void)
{
	return open(SLEEPY_PMU_DEVICE, O_RDWR | O_CLOEXEC);
}

int sleepy_pmu_open_error(int err, char *buf, size_t len)
{
	if (err == ENOENT && !sleepy_supported()) {
		snprintf(buf, len, "%s", SLEEPY_NO_SUPPORT);
		return SLEEPY_EXIT_NO_SUPPORT;
	}
	snprintf(buf, len, "%s: %s%s", SLEEPY_PMU_DEVICE, strerror(err),
		 err == ENOENT ? " (modprobe sleepy_pmu)" : "");
	return 1;
}

int sleepy_pmu_ring_init(struct sleepy_pmu_ring *ring, size_t capacity)
{
	size_t i;

	if (capacity < 2 || (capacity & (capacity - 1))) {
		errno = EINVAL;
		return -1;
	}
	ring->slots = calloc(capacity, sizeof(*ring->slots));
	if (!ring->slots)
		return -1;
	for (i = 0; i < capacity; i++)
		atomic_init(&ring->slots[i].seq, i);
	ring->mask = capacity - 1;
	atomic_init(&ring->head, 0);
	atomic_init(&ring->tail, 0);
	atomic_init(&ring->received, 0);
	atomic_init(&ring->dropped, 0);
	atomic_init(&ring->foreign, 0);
	return 0;
}

void sleepy_pmu_ring_free(struct sleepy_pmu_ring *ring)
{
	free(ring->slots);
	ring->slots = NULL;
}

/* Signal-safe: 0, or -1 when the ring is full. */
static int ring_push(struct sleepy_pmu_ring *r,
		     const struct sleepy_pmu_event *ev)
{
	size_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
	struct sleepy_pmu_slot *s;

	for (;;) {
		size_t seq;

		s = &r->slots[pos & r->mask];
		seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (seq == pos) {
			if (atomic_compare_exchange_weak_explicit(
				    &r->head, &pos, pos + 1,
				    memory_order_relaxed, memory_order_relaxed))
				break;
		} else if ((ptrdiff_t)(seq - pos) < 0) {
			return -1;
		} else {
			pos = atomic_load_explicit(&r->head,
						   memory_order_relaxed);
		}
	}
	s->ev = *ev;
	atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
	return 0;
}

int sleepy_pmu_ring_pop(struct sleepy_pmu_ring *r, struct sleepy_pmu_event *ev)
{
	size_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
	struct sleepy_pmu_slot *s = &r->slots[pos & r->mask];
	size_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);

	if (seq != pos + 1)
		return 0;
	*ev = s->ev;
	atomic_store_explicit(&s->seq, pos + r->mask + 1, memory_order_release);
	atomic_store_explicit(&r->tail, pos + 1, memory_order_relaxed);
	return 1;
}

int sleepy_pmu_decode(const siginfo_t *si, struct sleepy_pmu_event *ev)
{
	struct pmu_siginfo p;

	memcpy(&p, si, sizeof(p));
	if (p.code != SLEEPY_PMU_SI_CODE)
		return -1;
	ev->pc = p.addr;
	ev->value = p.data;
	ev->counter = p.type;
	ev->cpu = p.flags;
	return 0;
}

static void pmu_handler(int sig, siginfo_t *si, void *uctx)
{
	struct sleepy_pmu_ring *r = atomic_load(&handler_ring);
	struct sleepy_pmu_event ev;
	int saved = errno;

	(void)sig;
	(void)uctx;
	if (r) {
		if (sleepy_pmu_decode(si, &ev)) {
			atomic_fetch_add(&r->foreign, 1);
		} else {
			atomic_fetch_add(&r->received, 1);
			if (ring_push(r, &ev))
				atomic_fetch_add(&r->dropped, 1);
		}
	}
	errno = saved;
}

int sleepy_pmu_register(int fd, int sig, struct sleepy_pmu_ring *ring)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = pmu_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	atomic_store(&handler_ring, ring);
	if (sigaction(sig, &sa, NULL))
		return -1;
	return ioctl(fd, SLEEPY_PMU_REGISTER, &sig);
}

int sleepy_pmu_unregister(int fd)
{
	return ioctl(fd, SLEEPY_PMU_UNREGISTER);
}

int sleepy_pmu_configure(int fd, uint32_t counter, uint32_t source,
			 uint64_t event, uint64_t threshold)
{
	struct sleepy_pmu_config cfg = {
		.counter = counter, .source = source,
		.event = event, .threshold = threshold,
	};

	return ioctl(fd, SLEEPY_PMU_CONFIGURE, &cfg);
}

int sleepy_pmu_stop(int fd, uint32_t counter)
{
	struct sleepy_pmu_config cfg = {
		.counter = counter, .flags = SLEEPY_PMU_CONFIG_STOP,
	};

	return ioctl(fd, SLEEPY_PMU_CONFIGURE, &cfg);
}

int sleepy_pmu_read_counter(int fd, int cpu, uint32_t counter,
			    uint64_t *value, int *cpu_out)
{
	struct sleepy_pmu_counter_value v = { .cpu = cpu, .counter = counter };

	if (ioctl(fd, SLEEPY_PMU_READ_COUNTER, &v))
		return -1;
	*value = v.value;
	if (cpu_out)
		*cpu_out = v.cpu;
	return 0;
}
