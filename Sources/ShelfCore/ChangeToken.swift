import Foundation

/// A position in a library's change history: "the library as it was after transaction N of store S".
///
/// Opaque to clients, who store its string form anywhere (`String(describing:)`) and give it back
/// later (`ChangeToken(_:)`). It names the store, so a token from a recreated or restored library
/// is recognised as foreign instead of silently meaning something else.
public struct ChangeToken: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    /// The UUID of the store the token belongs to.
    public let storeID: UUID
    /// The last committed write transaction the token includes (0: before the first one).
    public let transaction: Int64

    /// A token for `transaction` of store `storeID`.
    public init(storeID: UUID, transaction: Int64) {
        self.storeID = storeID
        self.transaction = transaction
    }

    private static let prefix = "shelf1"

    /// The stable string form: `shelf1.<store UUID>.<transaction>`.
    public var description: String { "\(Self.prefix).\(storeID.uuidString.lowercased()).\(transaction)" }

    /// Parses the string form; nil when the text is not a token.
    public init?(_ description: String) {
        let parts = description.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.prefix, let store = UUID(uuidString: String(parts[1])),
            let transaction = Int64(parts[2]), transaction >= 0
        else { return nil }
        self.init(storeID: store, transaction: transaction)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let token = ChangeToken(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a change token: \(text)"))
        }
        self = token
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
