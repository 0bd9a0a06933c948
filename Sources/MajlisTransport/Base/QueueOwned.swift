import Dispatch

/// A value that only one dispatch queue's work may touch, checked at every use, in release
/// builds too (`dispatchPrecondition`): a use from anywhere else stops the process where the
/// race starts, instead of corrupting state that is found wrong later. For the state a serial
/// queue owns inside a class shared between threads (a room host's engine).
@propertyWrapper
public struct QueueOwned<Value> {
    private var value: Value
    private let queue: DispatchQueue

    public init(wrappedValue: Value, queue: DispatchQueue) {
        value = wrappedValue
        self.queue = queue
    }

    public var wrappedValue: Value {
        _read {
            dispatchPrecondition(condition: .onQueue(queue))
            yield value
        }
        _modify {
            dispatchPrecondition(condition: .onQueue(queue))
            yield &value
        }
    }
}
