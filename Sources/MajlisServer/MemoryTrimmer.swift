#if canImport(Glibc)
import CMalloc
#endif

/// Hands freed heap memory back to the system (glibc keeps it after a burst, such as a join
/// storm, otherwise). Cheap enough to run every few seconds.
enum MemoryTrimmer {
    static func trim() {
        #if canImport(Glibc)
        _ = malloc_trim(0)
        #endif
    }
}
