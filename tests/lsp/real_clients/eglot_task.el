;;; Run one agentls task from Emacs with eglot, as a user would with M-x eglot and
;;; eglot-execute-command (synchronous: Emacs sends no didChange until it returns).
;;; Writes the task's result and the edited buffers, as JSON, to $AGENTLS_TEST_OUT.
(require 'eglot)
(require 'json)
(let* ((root (getenv "AGENTLS_TEST_ROOT"))
       (out (getenv "AGENTLS_TEST_OUT")))
  (setq eglot-server-programs `((python-mode . (,(getenv "AGENTLS_PYTHON") "-m" "agentls"))))
  (fset 'y-or-n-p (lambda (&rest _) t))
  ;; Wait for the initialize answer however long a loaded machine takes to start the
  ;; server: after the default 3 s, eglot connects in the background, with no server yet.
  (setq eglot-sync-connect 120)
  ;; And for the task's answer (eglot 1.9's jsonrpc gives up after 10 s by default).
  (setq jsonrpc-default-request-timeout 120)
  (add-hook 'project-find-functions (lambda (_dir) (cons 'transient root)))
  (find-file (expand-file-name "app.py" root))
  (python-mode)
  (apply #'eglot (eglot--guess-contact))
  (let* ((server (eglot-current-server))
         (result (eglot-execute-command server 'agent.runTask
                   (vector `(:task "change things" :uri ,(eglot--path-to-uri (buffer-file-name)))))))
    (with-temp-file out
      (insert (json-encode `((result . ,result)
                             (buffer . ,(with-current-buffer "app.py" (buffer-string)))
                             (new . ,(with-current-buffer "notes.md" (buffer-string)))))))
    (eglot-shutdown server)))
