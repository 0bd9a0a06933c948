/// How log lines are written: for people, or one JSON object per line for log pipelines.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}
