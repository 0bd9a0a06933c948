import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP relay with a switch that cuts the network: while cut, nothing crosses in
/// either direction and new connections hang (as on a dead mobile link, where nothing is
/// refused, it just never arrives); when restored, held connections carry on. Connections
/// that a side closes meanwhile are closed on the other side too.
public final class TCPRelay: @unchecked Sendable {
    // Audited: `listener` and `upstreamPort` are set once in init; shared state is in `state`.
    private let listener: Int32
    private let upstreamPort: UInt16
    private let state = Mutex<(cut: Bool, running: Bool, sockets: Set<Int32>)>((false, true, []))
    /// The port clients connect to.
    public let port: Int

    /// Relays 127.0.0.1:`port` (picked) to 127.0.0.1:`upstream`.
    public init(upstream: Int) throws {
        upstreamPort = UInt16(upstream)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, Glibc.listen(fd, 64) == 0 else { throw SpeechSample.Failure(description: "cannot listen for the TCP relay") }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: actual.sin_port))
        Thread.detachNewThread { self.acceptLoop() }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// Cuts (true) or restores (false) the network.
    public func setCut(_ cut: Bool) { state.withLock { $0.cut = cut } }

    private var isCut: Bool { state.withLock { $0.cut } }
    private var isRunning: Bool { state.withLock { $0.running } }

    public func stop() {
        let sockets = state.withLock { state -> Set<Int32> in
            state.running = false
            defer { state.sockets = [] }
            return state.sockets
        }
        for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Waits while the network is cut; false when the relay stopped.
    private func waitWhileCut() -> Bool {
        while isCut && isRunning { usleep(10_000) }
        return isRunning
    }

    private func acceptLoop() {
        while isRunning {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            Thread.detachNewThread { self.connect(client) }
        }
    }

    private func connect(_ client: Int32) {
        guard waitWhileCut() else {
            close(client)
            return
        }
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(upstream)
            close(client)
            return
        }
        state.withLock { $0.sockets.formUnion([client, upstream]) }
        Thread.detachNewThread { self.pump(from: client, to: upstream) }
        pump(from: upstream, to: client)
    }

    /// Copies bytes one way, holding them while the network is cut; a close on one side is
    /// passed on.
    private func pump(from source: Int32, to target: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0, waitWhileCut() else { break }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(target, $0.baseAddress! + sent, count - sent) }
                guard written > 0 else { break }
                sent += written
            }
            if sent < count { break }
        }
        shutdown(target, Int32(SHUT_RDWR))
        shutdown(source, Int32(SHUT_RDWR))
        let last = state.withLock { state -> Bool in
            let removed = state.sockets.remove(source) != nil
            return removed && !state.sockets.contains(target)
        }
        if last {
            close(source)
            close(target)
        }
    }
}
