/// The usage text of `ask` and `assistant`, as `termhost help` shows it.
enum AssistantUsage {
    static let ask = """
        termhost ask [--host H] [--acting] [--provider NAME] [--json] [--full-access]
                     [--reviewer NAME [--reviewer-timeout SECONDS]] [--background] "QUESTION"
          exit status: 0 the model finished, 1 the run failed, 130 stopped (Ctrl-C)
          --background: the run goes on in the daemon; termhost approvals answers its Asks
        """
    static let assistant = """
        termhost assistant [--host H] [--acting] [--provider NAME]   a conversation
                           [--full-access] [--reviewer NAME]        (ask's options)
        termhost assistant history [--json]                          runs, newest first
        termhost assistant show ID [--json]                          one conversation
        termhost assistant rm ID                                     forget a conversation
        termhost assistant provider add|list|rm|test                 model endpoints
        termhost assistant approvals [list|rm ID] [--json]           remembered approvals
        termhost assistant audit [--json] [--run ID]                 every decision on a tool call
        """
    static let mcp = """
        termhost mcp [--planning]
          the tool catalog for MCP clients over stdio (claude mcp add termhost -- termhost mcp)
        """
}
