/// Where a request's body goes as it arrives, instead of being kept whole for the handler: an
/// upload's bytes, kept as they come, so a connection cut halfway keeps what arrived. Its size
/// is not bounded by the server's limit on bodies read whole; the request must only go on
/// arriving (a connection silent for the request deadline is closed, and the sink told `cut`).
///
/// Called on the service thread only, in order: `receive` for each piece, then `finish` or
/// `cut`, once. None of them may block (hand writes to a queue of your own).
public protocol HTTPBodySink: AnyObject, Sendable {
    /// More of the body.
    func receive(_ bytes: UnsafeRawBufferPointer)
    /// The whole body arrived: answer through `exchange` (now or later, from any thread).
    func finish(_ exchange: HTTPExchange)
    /// The connection closed before the whole body arrived: what arrived is to be kept.
    func cut()
}
