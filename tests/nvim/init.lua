-- chartseq lsp for chart files: one server per chart root (Neovim 0.7 and newer).
local chartseq = {}
vim.api.nvim_create_autocmd("FileType", {
  pattern = { "yaml", "helm" },
  callback = function(args)
    local file = vim.api.nvim_buf_get_name(args.buf)
    local chart = vim.fn.findfile("Chart.yaml", vim.fn.fnamemodify(file, ":p:h") .. ";")
    if chart == "" then
      return
    end
    local root = vim.fn.fnamemodify(chart, ":p:h")
    chartseq[root] = chartseq[root]
      or vim.lsp.start_client({ name = "chartseq", cmd = { "chartseq", "lsp" }, root_dir = root })
    vim.lsp.buf_attach_client(args.buf, chartseq[root])
  end,
})
