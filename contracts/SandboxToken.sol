// SPDX-License-Identifier: MIT
// The ERC-20 token the offline sandbox chain (anvil) deploys for each asset of the `local` network.
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

contract SandboxToken is ERC20 {
    uint8 private immutable _tokenDecimals;
    address public immutable minter;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) ERC20(name_, symbol_) {
        _tokenDecimals = decimals_;
        minter = msg.sender;
    }

    function decimals() public view override returns (uint8) {
        return _tokenDecimals;
    }

    /// Only the deployer mints: sandbox accounts are funded at deployment.
    function mint(address to, uint256 amount) external {
        require(msg.sender == minter, "SandboxToken: only the minter mints");
        _mint(to, amount);
    }
}
