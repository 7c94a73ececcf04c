/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsleepy_pmu: a small library for /dev/sleepy_pmu.
 *
 * A process registers its thread group for a signal; the library installs
 * the signal handler, which decodes each overflow signal into a
 * struct sleepy_pmu_event and pushes it into a lock-free ring, safe to use
 * from a signal handler. The program drains the ring at leisure with
 * sleepy_pmu_ring_pop() from one thread. Like libc's calls, the functions
 * return 0 (or a descriptor) on success and -1 with errno set on failure.
 *
 * Build with -I<uapi dir> for <linux/sleepy_pmu.h> and link
 * libsleepy_pmu.a.
 */
#ifndef SLEEPY_LIBSLEEPY_PMU_H
#define SLEEPY_LIBSLEEPY_PMU_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/sleepy_pmu.h>

/* One overflow signal as it arrived. */
struct sleepy_pmu_event {
	uint64_t pc;		/* interrupted user PC (si_addr) */
	uint64_t value;		/* counter value at the overflow */
	uint32_t cpu;
	uint32_t counter;
};

struct sleepy_pmu_slot {
	atomic_size_t seq;
	struct sleepy_pmu_event ev;
};

/* A bounded multi-producer ring; signal handlers of any thread push. */
struct sleepy_pmu_ring {
	struct sleepy_pmu_slot *slots;
	size_t mask;			/* capacity - 1 */
	atomic_size_t head;		/* next slot to fill */
	atomic_size_t tail;		/* next slot to drain */
	atomic_uint_least64_t received;	/* overflow signals handled */
	atomic_uint_least64_t dropped;	/* of those, lost to a full ring */
	atomic_uint_least64_t foreign;	/* the signal, but not from us */
};

/* Open /dev/sleepy_pmu: a descriptor, or -1. */
int sleepy_pmu_open(void);

/*
 * Why sleepy_pmu_open() failed with errno err, in one line into buf (len
 * bytes): a kernel without sleepy, the module not loaded, or another
 * error. Returns the exit status for it: SLEEPY_EXIT_NO_SUPPORT for the
 * first, else 1.
 */
int sleepy_pmu_open_error(int err, char *buf, size_t len);

/* capacity: a power of two >= 2. Not from a signal handler. */
int sleepy_pmu_ring_init(struct sleepy_pmu_ring *ring, size_t capacity);
void sleepy_pmu_ring_free(struct sleepy_pmu_ring *ring);

/*
 * Install the handler for sig (SA_SIGINFO | SA_RESTART), feeding ring, and
 * register the calling thread group for sig. Registering again changes the
 * signal. One ring per process.
 */
int sleepy_pmu_register(int fd, int sig, struct sleepy_pmu_ring *ring);
int sleepy_pmu_unregister(int fd);

/* Take the oldest event: 1 if one was taken, 0 if the ring is empty. */
int sleepy_pmu_ring_pop(struct sleepy_pmu_ring *ring,
			struct sleepy_pmu_event *ev);

/* Decode an overflow siginfo: 0, or -1 if si is not one. Signal-safe. */
int sleepy_pmu_decode(const siginfo_t *si, struct sleepy_pmu_event *ev);

/* Start (or restart) a counter on all CPUs; needs CAP_PERFMON. */
int sleepy_pmu_configure(int fd, uint32_t counter, uint32_t source,
			 uint64_t event, uint64_t threshold);
int sleepy_pmu_stop(int fd, uint32_t counter);

/* A counter's value on cpu (-1: the calling CPU); *cpu_out says which. */
int sleepy_pmu_read_counter(int fd, int cpu, uint32_t counter,
			    uint64_t *value, int *cpu_out);

#endif /* SLEEPY_LIBSLEEPY_PMU_H */
