/* A shared library that ends the process, as a library's error path or a
 * Fortran runtime's STOP does (tests/mpi/exits.c). */
#include <stdlib.h>
#include <unistd.h>

void exit_lib_exit(int status);
void exit_lib__exit(int status);

void exit_lib_exit(int status)
{
    exit(status);
}

void exit_lib__exit(int status)
{
    _exit(status);
}
