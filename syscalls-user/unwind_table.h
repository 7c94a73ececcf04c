/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unwind tables for sleepy_unwind(2) (include/uapi/linux/sleepy.h): an
 * ELF file's CFI (.eh_frame, else .debug_frame), read with libdw, as rows
 * of simple rules the tick applies without a DWARF interpreter.
 */
#ifndef SLEEPY_UNWIND_TABLE_H
#define SLEEPY_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct uw_table {
	void *data;		/* struct sleepy_unwind_table and its arrays */
	size_t size;
	uint32_t nr_rows;
	uint32_t nr_rules;
	uint64_t marked_bytes;	/* text whose rule needs an expression */
	uint64_t none_bytes;	/* text no CFI covers */
	uint64_t text_bytes;	/* hi - lo */
	uint64_t cfi_bytes;	/* the .eh_frame (or .debug_frame) section */
	const char *cfi_section;
};

/*
 * The table of the ELF file open at fd; 0, or -1 with a one-line reason
 * in err (n bytes).
 */
int uw_table_of_fd(int fd, struct uw_table *t, char *err, size_t n);

/* The same for the ELF image at mem (size bytes): the vDSO's. */
int uw_table_of_image(const void *mem, size_t size, struct uw_table *t,
		      char *err, size_t n);

/* The GNU build-id of the ELF file at fd, as hex in hex (2 * 20 + 1). */
int uw_build_id(int fd, char *hex, size_t n);

void uw_table_free(struct uw_table *t);

#endif
