import Foundation
import MajlisProtocol
import Synchronization

/// Answers the app's requests for this client's log (`log.requested`, docs/protocol.md section
/// 20): the lines `ClientLog` kept of the span asked for go up as a text upload (resumable,
/// through `MediaTransfer`) and are handed over with `log.deliver`. A request is answered once
/// however often it is told (every node and every reconnect may tell it); one that fails (the
/// connection cut mid-upload) is tried again when the server tells it again, at the next
/// connection. Whether to answer at all is the app's choice: it starts the responder.
public final class LogResponder: Sendable {
    private let signaling: any SignalingClient
    private let transfer: any MediaTransfer
    private let log: ClientLog
    private let logger: Logger
    private let state = Mutex<(answered: Set<String>, running: Set<String>, task: Task<Void, Never>?)>(([], [], nil))

    /// Bytes sent in one piece of the upload.
    static let piece = 256 << 10

    public init(signaling: any SignalingClient, transfer: any MediaTransfer, log: ClientLog, logger: Logger = .silent) {
        self.signaling = signaling
        self.transfer = transfer
        self.log = log
        self.logger = logger
    }

    /// Answers every request from now on, until `stop`.
    public func start() {
        let events = signaling.subscribe()
        let task = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                if case .event(let frame) = event, case .logRequested(let request) = frame.event {
                    Task { try? await self.answer(request) }
                }
            }
        }
        state.withLock { $0.task?.cancel(); $0.task = task }
    }

    /// Answers no more, and closes the log (a clean end of the run).
    public func stop() {
        state.withLock { $0.task?.cancel(); $0.task = nil }
        log.close()
    }

    /// Sends the log `request` asks for and hands it over; nothing when it was answered already
    /// or is being answered.
    public func answer(_ request: LogRequest) async throws(MajlisError) {
        let mine = state.withLock { state -> Bool in
            guard !state.answered.contains(request.id), !state.running.contains(request.id) else { return false }
            state.running.insert(request.id)
            return true
        }
        guard mine else { return }
        do throws(MajlisError) {
            let text = log.text(since: request.since, until: request.until)
            let body = Data((text.isEmpty ? "(no log lines from \(request.since) to \(request.until.map(String.init) ?? "now"))\n" : text).utf8)
            let media = try await upload(body)
            _ = try await signaling.request("log.deliver", ["id": .string(request.id), "media": .string(media)])
            state.withLock { $0.running.remove(request.id); $0.answered.insert(request.id) }
            logger.info("log \(request.id) delivered (\(body.count) bytes)")
        } catch {
            state.withLock { _ = $0.running.remove(request.id) }
            logger.warning("log \(request.id) not delivered: \(error)")
            throw error
        }
    }

    /// `body` as a finished text upload; its id. A piece cut short goes on from where the
    /// server stands.
    private func upload(_ body: Data) async throws(MajlisError) -> String {
        let length = Int64(body.count)
        let upload = try await transfer.create(length: length, type: LogRequest.type, filename: "majlis.log")
        var offset: Int64 = 0
        var tries = 0
        while offset < length {
            let end = min(length, offset + Int64(Self.piece))
            do throws(MajlisError) {
                offset = try await transfer.append(body.subdata(in: Int(offset)..<Int(end)), to: upload, at: offset)
            } catch {
                tries += 1
                guard tries < 3, let at = try await transfer.offset(of: upload) else { throw error }
                offset = at
            }
        }
        return upload
    }
}
