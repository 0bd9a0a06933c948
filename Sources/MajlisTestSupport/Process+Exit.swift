import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Waiting for a `Process` by its pid. Foundation on Linux learns that a child ended when a
/// socket the child inherited closes; a process spawned by another thread at that moment (a
/// browser, a web server, a sound server) may inherit the socket too and hold it open, and then
/// Foundation never learns it: `waitUntilExit` spins for ever and `isRunning` stays true (seen
/// here: a suite hung 20 minutes at 94% of a core, waiting on a child that had exited). These ask
/// the kernel instead.
extension Process {
    /// How a child ended: its exit code, or the signal that ended it (as `terminationStatus`
    /// and `terminationReason` have them).
    public struct Ending: Sendable, Equatable {
        public var status: Int32
        public var bySignal: Bool
    }

    /// Endings of children reaped here, by pid and object (a pid is used again, in time).
    private static let reaped = Mutex<[String: Ending]>([:])

    /// How it ended, or nil while it runs. Reaps it.
    public var ending: Ending? {
        let key = "\(processIdentifier)-\(ObjectIdentifier(self).hashValue)"
        if let ending = Self.reaped.withLock({ $0[key] }) { return ending }
        var status: Int32 = 0
        let waited = waitpid(processIdentifier, &status, WNOHANG)
        if waited == processIdentifier {
            let ending = (status & 0x7F) == 0 ? Ending(status: (status >> 8) & 0xFF, bySignal: false) : Ending(status: status & 0x7F, bySignal: true)
            Self.reaped.withLock { $0[key] = ending }
            return ending
        }
        // Reaped already by Foundation's own watcher, which says so a moment later.
        if waited == -1 && errno == ECHILD && !isRunning { return Ending(status: terminationStatus, bySignal: terminationReason == .uncaughtSignal) }
        return nil
    }

    /// The status it ended with, or nil while it runs (see `ending`).
    public var exitStatus: Int32? { ending?.status }

    /// Whether it still runs (see `exitStatus`).
    public var isAlive: Bool { exitStatus == nil }

    /// Waits until it ends; returns how.
    @discardableResult
    public func waitForEnding() -> Ending {
        while true {
            if let ending { return ending }
            usleep(5_000)
        }
    }

    /// Waits until it ends; returns its status.
    @discardableResult
    public func waitForExit() -> Int32 { waitForEnding().status }
}
