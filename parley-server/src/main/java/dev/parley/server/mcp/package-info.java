/**
 * The MCP edge over HTTP ({@code /mcp}): sessions and the in-process hub port that the tools of
 * the {@code parley-mcp} module call, answering the REST contract's JSON.
 */
package dev.parley.server.mcp;
