import Foundation
import Shelf
import ShelfCore

extension Library {
    /// The user `name` that a proxy or a directory vouches for, made now (with `admin`) when it does
    /// not exist yet. Its password is one nobody knows: it signs in through what vouched for it, or
    /// with an API key. `made` is false when the user existed, also when a concurrent first sign-in
    /// made it a moment ago.
    func externalUser(named name: String, admin: Bool) async throws -> (user: User, made: Bool) {
        if let existing = try await user(named: name) { return (existing, false) }
        var secret = [UInt8](repeating: 0, count: 32)
        for index in secret.indices { secret[index] = UInt8.random(in: 0...255) }
        do {
            return (try await addUser(name: name, password: secret.map { String(format: "%02x", $0) }.joined(), admin: admin), true)
        } catch let error as LibraryError where error.kind == .conflict {
            guard let made = try await user(named: name) else { throw error }
            return (made, false)
        }
    }
}
