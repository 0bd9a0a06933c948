import Dispatch
import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Posts the outbox's events to the configured endpoints, in order per room and endpoint, from a
/// thread of its own: the oldest pending event of each room goes out (up to `concurrency` posts
/// at once), a 2xx marks it delivered, anything else (an error status, a refused connection, no
/// answer within the timeout) schedules it again with backoff (`WebhookRetry`), and the room's
/// later events wait behind it. An event is given up only once it is older than the retention
/// time, and that is counted and logged. Everything it knows is in the store, so a restart (or a
/// `kill -9`) resumes where it was; a post that was in flight is made again with the same id.
final class WebhookDispatcher: Sendable {
    private struct State {
        /// (endpoint, room) lanes with a post in flight.
        var busy: Set<String> = []
        var running = false
    }

    private let store: Store
    private let settings: WebhookSettings
    private let key: (id: String, secret: String)
    private let logger: Logger
    private let metrics: ServerMetrics
    private let clock: any MillisecondClock
    private let retry: WebhookRetry
    private let session: URLSession
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(store: Store, settings: WebhookSettings, key: (id: String, secret: String), logger: Logger, metrics: ServerMetrics, clock: any MillisecondClock) {
        self.store = store
        self.settings = settings
        self.key = key
        self.logger = logger
        self.metrics = metrics
        self.clock = clock
        var retry = WebhookRetry(retention: Duration.seconds(settings.retention).milliseconds)
        retry.first = settings.firstRetry
        retry.longest = settings.longestRetry
        self.retry = retry
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = settings.timeout
        configuration.timeoutIntervalForResource = settings.timeout
        configuration.httpMaximumConnectionsPerHost = settings.concurrency
        session = URLSession(configuration: configuration)
    }

    var endpoints: [String] { settings.endpoints }

    func start() {
        state.withLock { $0.running = true }
        let thread = Thread { [self] in
            ThreadName.set("majlis-webhooks")
            run()
        }
        thread.start()
    }

    /// Stops posting; posts in flight are cancelled (counted as failed attempts, made again after
    /// the next start).
    func stop() {
        guard state.withLock({ state in defer { state.running = false }; return state.running }) else { return }
        wake.signal()
        finished.wait()
        session.invalidateAndCancel()
    }

    /// New events are in the outbox (or a post finished): look again now.
    func poke() { wake.signal() }

    private func run() {
        var passes = 0
        while state.withLock({ $0.running }) {
            let busy = state.withLock { $0.busy }
            let room = settings.concurrency - busy.count
            var due: [Store.PendingWebhook] = []
            if room > 0 {
                do {
                    due = try store.dueWebhooks(now: clock.now(), limit: room, busy: busy)
                } catch {
                    logger.error("webhooks: the outbox could not be read: \(error)")
                }
            }
            for delivery in due { post(delivery) }
            passes += 1
            if passes % 2_400 == 0 { prune() }
            _ = wake.wait(timeout: .now() + .milliseconds(250))
        }
        finished.signal()
    }

    private func post(_ delivery: Store.PendingWebhook) {
        // Another node sharing the outbox may have read it too: only the one whose claim lands
        // posts it. The claim outlasts a post (its timeout) by a margin for the nodes' clocks to
        // differ by; a node that dies while posting holds the room's events back that long.
        do {
            guard try store.claimWebhook(delivery, until: clock.now() + Int64(settings.timeout * 1000) + 5_000) else { return }
        } catch {
            logger.error("webhooks: the outbox could not be written: \(error)")
            return
        }
        guard let url = URL(string: delivery.endpoint) else {
            finish(delivery, error: "not a URL")
            return
        }
        state.withLock { _ = $0.busy.insert(Store.webhookLane(delivery.endpoint, delivery.room)) }
        var request = URLRequest(url: url, timeoutInterval: settings.timeout)
        request.httpMethod = "POST"
        request.httpBody = Data(delivery.body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("majlis/\(SignalingServer.version)", forHTTPHeaderField: "User-Agent")
        request.setValue(delivery.eventId, forHTTPHeaderField: "Majlis-Event-Id")
        request.setValue(key.id, forHTTPHeaderField: "Majlis-Key")
        request.setValue(
            WebhookSignature.header(body: delivery.body, secret: key.secret, time: clock.now() / 1000), forHTTPHeaderField: "Majlis-Signature")
        let task = session.dataTask(with: request) { [self] _, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            if error == nil, (200..<300).contains(status) {
                finish(delivery, error: nil)
            } else {
                finish(delivery, error: error.map { "\($0.localizedDescription)" } ?? "HTTP \(status)")
            }
        }
        task.resume()
    }

    /// Records how a post went, frees its lane and looks for more.
    private func finish(_ delivery: Store.PendingWebhook, error: String?) {
        let now = clock.now()
        do {
            if let error {
                metrics.count(.webhookAttemptsFailed)
                let at = retry.next(afterFailures: delivery.attempts + 1, created: delivery.createdAt, now: now, random: Double.random(in: 0..<1))
                try store.webhookFailed(delivery, error: error, retryAt: at)
                if at == nil {
                    metrics.count(.webhooksGivenUp)
                    logger.error("webhook \(delivery.eventId) (room \(delivery.room)) to \(delivery.endpoint) given up after \(delivery.attempts + 1) attempts: \(error)")
                } else if delivery.attempts == 0 {
                    logger.warning("webhook \(delivery.eventId) to \(delivery.endpoint) failed (\(error)); retrying")
                }
            } else {
                try store.webhookDelivered(delivery, at: now)
                metrics.webhookDelivered(afterMilliseconds: now - delivery.createdAt)
            }
        } catch {
            logger.error("webhooks: the outbox could not be updated: \(error)")
        }
        state.withLock { _ = $0.busy.remove(Store.webhookLane(delivery.endpoint, delivery.room)) }
        wake.signal()
    }

    private func prune() {
        do {
            try store.pruneWebhooks(before: clock.now() - Duration.seconds(settings.retention).milliseconds)
        } catch {
            logger.error("webhooks: old events could not be pruned: \(error)")
        }
    }
}
