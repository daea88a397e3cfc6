// SPDX-License-Identifier: MIT
// Deposit addresses (docs/decisions/0028-deposit-addresses.md): one address per checkout session, derived with
// CREATE2 from this factory, the organisation's wallet (the destination) and the session. Money sent there can only
// ever move to that destination, whoever calls `collect`; nobody holds a key for the address.
pragma solidity ^0.8.28;

/// The factory's side of the sweeper's constructor: what to forward, and where.
interface IDepositParameters {
    function sweepParameters() external view returns (address destination, address[] memory tokens);
}

/// Created by DepositFactory with CREATE2 at a deposit address, with constant init code (so the address does not
/// depend on the token list). Its constructor forwards each token's whole balance and then the native balance to the
/// destination, and self-destructs: created and destroyed in one transaction, the account is removed (EIP-6780), so
/// the address stays codeless, goes on receiving (a 21,000-gas native transfer included) and can be collected again.
contract DepositSweeper {
    constructor() {
        (address destination, address[] memory tokens) = IDepositParameters(msg.sender).sweepParameters();
        for (uint256 i = 0; i < tokens.length; ++i) {
            address token = tokens[i];
            // balanceOf(this); a token that fails, or is no contract, is skipped.
            (bool ok, bytes memory data) = token.staticcall(abi.encodeWithSelector(0x70a08231, address(this)));
            if (!ok || data.length < 32) continue;
            uint256 balance = abi.decode(data, (uint256));
            if (balance == 0) continue;
            // transfer(destination, balance). The outcome is not checked: a token that refuses (paused, blocked)
            // keeps its balance here, still bound to this destination, and must not stop the rest of the sweep.
            (ok, ) = token.call(abi.encodeWithSelector(0xa9059cbb, destination, balance));
        }
        // Sends the native balance without running any code at the destination, so it cannot fail.
        selfdestruct(payable(destination));
    }
}

contract DepositFactory is IDepositParameters {
    /// keccak256 of the sweeper's init code: with the factory's address and the salt it gives every deposit address.
    bytes32 public immutable sweeperInitCodeHash = keccak256(type(DepositSweeper).creationCode);

    /// Where the sweeper being created sends everything; set by `collect` for the span of its CREATE2 calls.
    address private transient _destination;
    /// True while `collect` runs: a token called by a sweeper cannot re-enter and change the parameters.
    bool private transient _collecting;
    /// The token list lives in transient slots from TOKENS_SLOT: the length, then one address per slot.
    uint256 private constant TOKENS_SLOT = uint256(keccak256("kassa.deposit-factory.tokens"));

    event Collected(address indexed deposit, address indexed destination);

    error Reentered();
    error NotCollecting();
    error NotCollected(bytes32 id);

    /// The salt binds the destination: a deposit address leads to one destination, forever.
    function depositSalt(address destination, bytes32 id) public pure returns (bytes32) {
        return keccak256(abi.encode(destination, id));
    }

    /// The deposit address for (destination, id) on every chain where this factory has this address.
    function depositAddress(address destination, bytes32 id) external view returns (address) {
        bytes32 hash = keccak256(
            abi.encodePacked(bytes1(0xff), address(this), depositSalt(destination, id), sweeperInitCodeHash)
        );
        return address(uint160(uint256(hash)));
    }

    /// Forwards each deposit address's `tokens` and native balance to `destination`; anyone may call it.
    /// An id may appear once per call (the second CREATE2 at the same address in one transaction fails).
    function collect(address destination, bytes32[] calldata ids, address[] calldata tokens) external {
        if (_collecting) revert Reentered();
        _collecting = true;
        _destination = destination;
        uint256 slot = TOKENS_SLOT;
        assembly {
            tstore(slot, tokens.length)
            for {
                let i := 0
            } lt(i, tokens.length) {
                i := add(i, 1)
            } {
                tstore(add(slot, add(i, 1)), calldataload(add(tokens.offset, mul(i, 0x20))))
            }
        }
        bytes memory initCode = type(DepositSweeper).creationCode;
        for (uint256 i = 0; i < ids.length; ++i) {
            bytes32 salt = depositSalt(destination, ids[i]);
            address deposit;
            assembly {
                deposit := create2(0, add(initCode, 0x20), mload(initCode), salt)
            }
            if (deposit == address(0)) revert NotCollected(ids[i]);
            emit Collected(deposit, destination);
        }
        _destination = address(0);
        _collecting = false;
    }

    /// Read by the sweeper's constructor; only meaningful while `collect` runs.
    function sweepParameters() external view returns (address destination, address[] memory tokens) {
        if (!_collecting) revert NotCollecting();
        destination = _destination;
        uint256 slot = TOKENS_SLOT;
        uint256 length;
        assembly {
            length := tload(slot)
        }
        tokens = new address[](length);
        for (uint256 i = 0; i < length; ++i) {
            address token;
            assembly {
                token := tload(add(slot, add(i, 1)))
            }
            tokens[i] = token;
        }
    }
}
