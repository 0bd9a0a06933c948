import CNetShim

/// Names the calling thread where the system shows it (`top -H`, `/proc/<pid>/task/*/comm`,
/// debuggers): at most 15 bytes on Linux, the rest cut off. Foundation's `Thread.name` reaches
/// the system only when set on the thread after its creator's `start()` has returned, which the
/// thread's own first line cannot know, so the server's threads name themselves with this.
public enum ThreadName {
    public static func set(_ name: String) {
        let short = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        _ = majlis_set_thread_name(short)
    }
}
