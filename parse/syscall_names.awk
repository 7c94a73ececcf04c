# syscall_names.awk: the x86-64 system call names of the kernel's
# arch/x86/entry/syscalls/syscall_64.tbl (rows "NUMBER ABI NAME ENTRY") as
# the C table syscalls.c reads: the rows of the common and 64 ABIs (x32's
# numbers are not x86-64's), the name being the third column. parse's
# Makefile runs it at build time: awk -f syscall_names.awk TABLE >OUT.c
BEGIN {
	print "/* Generated from syscall_64.tbl by syscall_names.awk. */"
	print "#include \"syscalls.h\""
	print ""
	print "const char *const syscall_table[] = {"
	n = 0
}

/^[ \t]*#/ || NF < 3 { next }

($2 == "common" || $2 == "64") && $1 ~ /^[0-9]+$/ && \
    $3 ~ /^[A-Za-z0-9_]+$/ && $1 + 0 <= 32767 {
	printf "\t[%d] = \"%s\",\n", $1, $3
	if ($1 + 1 > n)
		n = $1 + 1
}

END {
	printf "\t[%d] = 0,\n", n
	print "};"
	print ""
	printf "const unsigned int syscall_table_size = %d;\n", n
}
