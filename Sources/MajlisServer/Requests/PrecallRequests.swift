import Foundation
import MajlisForwarding
import MajlisProtocol
import MajlisRoom
import MajlisTransport
import Synchronization

/// The pre-call tests (docs/protocol.md section 15): each connection may run an echo test and
/// a probe, before or beside its rooms, under the node's caps (`PrecallBudget`); they end with
/// the connection, or after a minute.
final class PrecallRequests: Sendable {
    private let context: ServerContext
    /// The tests running, against their caps.
    private let budget = Mutex(PrecallBudget())

    init(context: ServerContext) {
        self.context = context
    }

    private struct Started: Encodable {
        var media: JSONValue?
        var echoSSRC: UInt32?
        var delay: Int?
        var up: Int?
        var down: Int?
        var seconds: Int
        var sdp: String?
        var tracks: [WebRTCAnswer.Track]?
        var uplink: String?
    }

    /// Carries out `op` (request `re`) for `caller` on `session`, and answers it.
    func handle(_ op: PrecallOp, re: Int64, session: Session, caller: Caller) {
        let media = context.media
        let seconds = Int(MediaRouterCore.precallLifetime / 1_000)
        func fail(_ error: ProtocolError) { session.send(WireEncoder.failure(re: re, error)) }
        switch op {
        case .echoStart(let delay, let sdp):
            let test = Self.test(session, .echo)
            let room = MediaRouterCore.precallRoom(test)
            var offer: WebRTCOffer?
            if let sdp {
                do {
                    // The microphone and its echo are all an echo test can use.
                    offer = try WebRTCOffer(admitting: sdp, op: "echo.start", mostSections: 2, why: "an echo test takes at most 2 (the microphone and its echo)")
                } catch {
                    return fail(error)
                }
            }
            if let refusal = admit(.echo, session: session, user: caller.id) { return fail(refusal) }
            let ssrc = media.startPrecall(.echo(delay: Double(delay)), test: test, user: caller.id)
            var started = Started(
                media: media.mediaInfo(room: room, user: caller.id), echoSSRC: MediaRouterCore.echoSSRC(of: ssrc), delay: delay, seconds: seconds)
            if let offer {
                guard let answer = media.negotiate(room: room, user: caller.id, offer: offer, seats: 1) else {
                    stop(.echo, session: session, user: caller.id)
                    return fail(ProtocolError(.internal, "WebRTC media is not available on this server"))
                }
                started.media = nil
                started.echoSSRC = answer.tracks.first?.ssrc
                started.sdp = answer.sdp
                started.tracks = answer.tracks
                started.uplink = answer.uplink
            }
            session.send(WireEncoder.success(re: re, data: started))
        case .probeStart(let up, let down):
            let test = Self.test(session, .probe)
            if let refusal = admit(.probe, session: session, user: caller.id, bitrate: ProbeSchedule.clamped(down)) { return fail(refusal) }
            media.startPrecall(.probe(up: up, down: down), test: test, user: caller.id)
            let info = media.mediaInfo(room: MediaRouterCore.precallRoom(test), user: caller.id)
            session.send(WireEncoder.success(re: re, data: Started(
                media: info, up: ProbeSchedule(bitrate: up).bitrate, down: ProbeSchedule(bitrate: down).bitrate, seconds: seconds)))
        case .probeResult:
            guard let figures = media.probeFigures(test: Self.test(session, .probe), user: caller.id) else {
                return fail(ProtocolError(.badRequest, "no probe runs on this connection: probe.start first"))
            }
            struct Result: Encodable { var up: ProbeFigures }
            session.send(WireEncoder.success(re: re, data: Result(up: figures)))
        case .echoStop:
            stop(.echo, session: session, user: caller.id)
            session.send(WireEncoder.success(re: re, data: EmptyData()))
        case .probeStop:
            stop(.probe, session: session, user: caller.id)
            session.send(WireEncoder.success(re: re, data: EmptyData()))
        }
    }

    /// Ends the session's tests (its connection closed).
    func end(session: Session, user: String) {
        for kind in [PrecallBudget.Kind.echo, .probe] { stop(kind, session: session, user: user) }
    }

    /// Admits a test of `kind` under the caps; why not, when it may not run.
    private func admit(_ kind: PrecallBudget.Kind, session: Session, user: String, bitrate: Int = 0) -> ProtocolError? {
        let address = session.address.withLock { $0 }
        let now = context.now()
        return budget.withLock { $0.admit(Self.test(session, kind), kind: kind, user: user, address: address, bitrate: bitrate, now: now) }
    }

    private func stop(_ kind: PrecallBudget.Kind, session: Session, user: String) {
        budget.withLock { $0.end(Self.test(session, kind)) }
        context.media.stopPrecall(test: Self.test(session, kind), user: user)
    }

    /// The name a connection's pre-call test of `kind` runs under in the media router.
    private static func test(_ session: Session, _ kind: PrecallBudget.Kind) -> String { "\(ObjectIdentifier(session).hashValue)/\(kind.rawValue)" }
}
