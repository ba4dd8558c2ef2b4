/*
 * Loom's MPI interface (MPI-3.1, C). Only functions Loom implements are
 * declared here: calling one that is missing is a compile error, not a wrong
 * answer. docs/mpi-coverage.md lists what is implemented.
 *
 * The standard names are macros for Loom-prefixed symbols (MPI_Init is
 * LMPI_Init, PMPI_Init is LPMPI_Init), so that a system MPI can be linked
 * beside Loom for traffic between nodes without clashing names. Programs
 * must be compiled with Loom's mpicc.
 */
#ifndef LOOM_MPI_H
#define LOOM_MPI_H

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_VERSION_STRING "0.1.0"
#define MPI_VERSION 3
#define MPI_SUBVERSION 1

/* Handles are ints: the kind of object is encoded so that a wrong or freed
 * handle is reported, not dereferenced. */
typedef int MPI_Comm;
typedef int MPI_Errhandler;

#define MPI_COMM_NULL ((MPI_Comm)0x04000000)
#define MPI_COMM_WORLD ((MPI_Comm)0x44000000)
#define MPI_COMM_SELF ((MPI_Comm)0x44000001)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0x14000000)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x54000000)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)0x54000001)
#define MPI_ERRORS_ABORT ((MPI_Errhandler)0x54000002)

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_ERROR_STRING 512

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* Error classes (MPI-3.1 section 8.4, in the standard's order). */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_ACCESS 20
#define MPI_ERR_AMODE 21
#define MPI_ERR_ASSERT 22
#define MPI_ERR_BAD_FILE 23
#define MPI_ERR_BASE 24
#define MPI_ERR_CONVERSION 25
#define MPI_ERR_DISP 26
#define MPI_ERR_DUP_DATAREP 27
#define MPI_ERR_FILE_EXISTS 28
#define MPI_ERR_FILE_IN_USE 29
#define MPI_ERR_FILE 30
#define MPI_ERR_INFO_KEY 31
#define MPI_ERR_INFO_NOKEY 32
#define MPI_ERR_INFO_VALUE 33
#define MPI_ERR_INFO 34
#define MPI_ERR_IO 35
#define MPI_ERR_KEYVAL 36
#define MPI_ERR_LOCKTYPE 37
#define MPI_ERR_NAME 38
#define MPI_ERR_NO_MEM 39
#define MPI_ERR_NOT_SAME 40
#define MPI_ERR_NO_SPACE 41
#define MPI_ERR_NO_SUCH_FILE 42
#define MPI_ERR_PORT 43
#define MPI_ERR_QUOTA 44
#define MPI_ERR_READ_ONLY 45
#define MPI_ERR_RMA_CONFLICT 46
#define MPI_ERR_RMA_SYNC 47
#define MPI_ERR_SERVICE 48
#define MPI_ERR_SIZE 49
#define MPI_ERR_SPAWN 50
#define MPI_ERR_UNSUPPORTED_DATAREP 51
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_WIN 53
#define MPI_ERR_RMA_RANGE 54
#define MPI_ERR_RMA_ATTACH 55
#define MPI_ERR_RMA_SHARED 56
#define MPI_ERR_RMA_FLAVOR 57
#define MPI_T_ERR_MEMORY 58
#define MPI_ERR_LASTCODE 0x3fffffff

/* Standard names -> Loom symbols. */
#define MPI_Init LMPI_Init
#define MPI_Init_thread LMPI_Init_thread
#define MPI_Finalize LMPI_Finalize
#define MPI_Initialized LMPI_Initialized
#define MPI_Finalized LMPI_Finalized
#define MPI_Query_thread LMPI_Query_thread
#define MPI_Is_thread_main LMPI_Is_thread_main
#define MPI_Abort LMPI_Abort
#define MPI_Comm_rank LMPI_Comm_rank
#define MPI_Comm_size LMPI_Comm_size
#define MPI_Comm_set_errhandler LMPI_Comm_set_errhandler
#define MPI_Comm_get_errhandler LMPI_Comm_get_errhandler
#define MPI_Errhandler_free LMPI_Errhandler_free
#define MPI_Error_class LMPI_Error_class
#define MPI_Error_string LMPI_Error_string
#define MPI_Wtime LMPI_Wtime
#define MPI_Wtick LMPI_Wtick
#define MPI_Get_processor_name LMPI_Get_processor_name
#define MPI_Get_version LMPI_Get_version
#define MPI_Get_library_version LMPI_Get_library_version
#define MPI_Barrier LMPI_Barrier

#define PMPI_Init LPMPI_Init
#define PMPI_Init_thread LPMPI_Init_thread
#define PMPI_Finalize LPMPI_Finalize
#define PMPI_Initialized LPMPI_Initialized
#define PMPI_Finalized LPMPI_Finalized
#define PMPI_Query_thread LPMPI_Query_thread
#define PMPI_Is_thread_main LPMPI_Is_thread_main
#define PMPI_Abort LPMPI_Abort
#define PMPI_Comm_rank LPMPI_Comm_rank
#define PMPI_Comm_size LPMPI_Comm_size
#define PMPI_Comm_set_errhandler LPMPI_Comm_set_errhandler
#define PMPI_Comm_get_errhandler LPMPI_Comm_get_errhandler
#define PMPI_Errhandler_free LPMPI_Errhandler_free
#define PMPI_Error_class LPMPI_Error_class
#define PMPI_Error_string LPMPI_Error_string
#define PMPI_Wtime LPMPI_Wtime
#define PMPI_Wtick LPMPI_Wtick
#define PMPI_Get_processor_name LPMPI_Get_processor_name
#define PMPI_Get_version LPMPI_Get_version
#define PMPI_Get_library_version LPMPI_Get_library_version
#define PMPI_Barrier LPMPI_Barrier

/* Declares MPI_x and PMPI_x (through the macros above). */
#define LOOM_DECL(ret, name, args) ret LMPI_##name args; ret LPMPI_##name args;

LOOM_DECL(int, Init, (int *argc, char ***argv))
LOOM_DECL(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
LOOM_DECL(int, Finalize, (void))
LOOM_DECL(int, Initialized, (int *flag))
LOOM_DECL(int, Finalized, (int *flag))
LOOM_DECL(int, Query_thread, (int *provided))
LOOM_DECL(int, Is_thread_main, (int *flag))
LOOM_DECL(int, Abort, (MPI_Comm comm, int errorcode))
LOOM_DECL(int, Comm_rank, (MPI_Comm comm, int *rank))
LOOM_DECL(int, Comm_size, (MPI_Comm comm, int *size))
LOOM_DECL(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
LOOM_DECL(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
LOOM_DECL(int, Errhandler_free, (MPI_Errhandler *errhandler))
LOOM_DECL(int, Error_class, (int errorcode, int *errorclass))
LOOM_DECL(int, Error_string, (int errorcode, char *string, int *resultlen))
LOOM_DECL(double, Wtime, (void))
LOOM_DECL(double, Wtick, (void))
LOOM_DECL(int, Get_processor_name, (char *name, int *resultlen))
LOOM_DECL(int, Get_version, (int *version, int *subversion))
LOOM_DECL(int, Get_library_version, (char *version, int *resultlen))
LOOM_DECL(int, Barrier, (MPI_Comm comm))

#undef LOOM_DECL

#ifdef __cplusplus
}
#endif
#endif
