import Foundation
import MajlisCommandLine

/// The lock a running `majlis serve` holds on its data directory (`DIR/lock`, flock), so that a
/// second server does not share its store and `majlis migrate` does not copy a store still
/// being written. Released by the kernel when the process ends, however it ends (kill -9 too).
enum DataLock {
    /// Takes the lock for a server; fails, saying so, when another process holds it.
    static func serve(_ directory: String) throws -> Int32 {
        let descriptor = try open(directory)
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw Arguments.Failure(description: "another majlis serve uses \(directory): stop it first, or give this one another --data")
        }
        return descriptor
    }

    /// Whether a server holds the lock on `directory` now.
    static func isServed(_ directory: String) -> Bool {
        guard let descriptor = try? open(directory) else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_SH | LOCK_NB) != 0
    }

    private static func open(_ directory: String) throws -> Int32 {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let descriptor = Glibc.open((directory as NSString).appendingPathComponent("lock"), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Arguments.Failure(description: "cannot write in \(directory): \(String(cString: strerror(errno)))") }
        return descriptor
    }
}
